package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	cvPath     = "/apis/config.openshift.io/v1/clusterversions"
	condPaused = "ChangesPaused"
	condPend   = "ChangesPending"
)

// server is one hosted API server: its ClusterVersion and its counters.
type server struct {
	mu          sync.Mutex
	index       int
	rv          int
	conditions  []map[string]any
	changed     chan struct{} // closed and replaced on every change (watchers)
	mode        string
	held        []net.Conn
	gets        int64 // GETs of the object
	patches     int64
	lists       int64
	watches     int64
	requests    int64 // all API requests, answered or not
	projectedAt float64
	firstReqs   int64 // requests up to and including the one that first projected
	firstGets   int64 // of those, GETs of the object
	droppedAt   float64
	restoredAt  float64

	// The controller's identity (kube-apiserver's behaviour: a bound
	// ServiceAccount token is refused once its ServiceAccount is gone,
	// and RBAC refuses what no binding grants).
	saUID     int // the ServiceAccount's uid; 0: none
	nextUID   int
	roleOK    bool           // the ClusterRole exists
	bindingOK bool           // the ClusterRoleBinding exists
	tokens    map[string]int // token -> the uid it was issued for
	adminReqs int64          // requests authenticated with the admin token
	saReqs    int64          // requests authenticated with a ServiceAccount token
	issued    int64          // tokens issued
}

func newServer(i int) *server {
	s := &server{index: i, rv: 1, mode: "ok", changed: make(chan struct{}), tokens: map[string]int{}}
	for _, c := range [][3]string{
		{"Available", "True", "Done applying 4.18.5"},
		{"Failing", "False", ""},
		{"Progressing", "False", "Cluster version is 4.18.5"},
		{"RetrievedUpdates", "True", ""},
		{"ReleaseAccepted", "True", "Payload loaded version=\"4.18.5\" image=\"quay.io/openshift-release-dev/ocp-release@sha256:0123456789abcdef\""},
		{"Upgradeable", "True", ""},
	} {
		s.conditions = append(s.conditions, map[string]any{"type": c[0], "status": c[1],
			"reason": "AsExpected", "message": c[2], "lastTransitionTime": "2026-01-01T00:00:00Z"})
	}
	return s
}

func (s *server) getMode() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// object renders the ClusterVersion; s.mu held.
func (s *server) object() map[string]any {
	return map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
		"metadata": map[string]any{"name": "version", "resourceVersion": strconv.Itoa(s.rv),
			"uid": "00000000-0000-0000-0000-" + strconv.Itoa(100000000000+s.index)},
		"spec":   map[string]any{"clusterID": "bench-" + strconv.Itoa(s.index)},
		"status": map[string]any{"conditions": s.conditions},
	}
}

func (s *server) hasOurs() bool {
	n := 0
	for _, c := range s.conditions {
		if c["type"] == condPaused || c["type"] == condPend {
			n++
		}
	}
	return n == 2
}

// bump records a change; s.mu held.
func (s *server) bump() {
	s.rv++
	close(s.changed)
	s.changed = make(chan struct{})
	if s.hasOurs() {
		now := unixNow()
		if s.projectedAt == 0 {
			s.projectedAt = now
			s.firstReqs = s.requests
			s.firstGets = s.gets
		}
		if s.droppedAt > 0 && s.restoredAt < s.droppedAt {
			s.restoredAt = now
		}
	}
}

func unixNow() float64 { return float64(time.Now().UnixNano()) / 1e9 }

type sim struct {
	servers []*server
	byPort  map[int]int
}

type ctxKey struct{}

func (m *sim) connContext(ctx context.Context, c net.Conn) context.Context {
	port := c.LocalAddr().(*net.TCPAddr).Port
	return context.WithValue(ctx, ctxKey{}, m.servers[m.byPort[port]])
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "apiVersion": "v1",
		"status": "Failure", "reason": reason, "message": msg, "code": code})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// serveAPI answers one hosted API request, after the server's mode had its say.
func (m *sim) serveAPI(w http.ResponseWriter, r *http.Request) {
	s := r.Context().Value(ctxKey{}).(*server)
	s.mu.Lock()
	s.requests++
	mode := s.mode
	s.mu.Unlock()
	switch mode {
	case "blackhole":
		<-r.Context().Done()
		return
	case "429":
		w.Header().Set("Retry-After", "1")
		status(w, 429, "TooManyRequests", "the server has received too many requests")
		return
	case "500":
		status(w, 500, "InternalError", "etcdserver: request timed out")
		return
	case "slow":
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
			return
		}
	}
	auth := r.Header.Get("Authorization")
	if auth == "Bearer "+token {
		s.mu.Lock()
		s.adminReqs++
		s.mu.Unlock()
		if m.serveIdentity(s, w, r) {
			return
		}
	} else {
		s.mu.Lock()
		uid, ok := s.tokens[strings.TrimPrefix(auth, "Bearer ")]
		valid := ok && uid == s.saUID && s.saUID != 0
		granted := s.roleOK && s.bindingOK
		if valid {
			s.saReqs++
		}
		s.mu.Unlock()
		if !valid {
			status(w, 401, "Unauthorized", "Unauthorized")
			return
		}
		// The ClusterRole: get of clusterversions/version, patch of its status.
		allowed := granted && ((r.URL.Path == cvPath+"/version" && r.Method == http.MethodGet) ||
			(r.URL.Path == cvPath+"/version/status" && r.Method == http.MethodPatch))
		if !allowed {
			status(w, 403, "Forbidden", "system:serviceaccount:kube-system:hcp-controller cannot "+
				strings.ToLower(r.Method)+" "+r.URL.Path)
			return
		}
	}
	switch {
	case r.URL.Path == cvPath && r.Method == http.MethodGet:
		m.listOrWatch(s, w, r)
	case r.URL.Path == cvPath+"/version" && r.Method == http.MethodGet:
		s.mu.Lock()
		s.gets++
		obj := s.object()
		s.mu.Unlock()
		writeJSON(w, obj)
	case (r.URL.Path == cvPath+"/version/status" || r.URL.Path == cvPath+"/version") &&
		r.Method == http.MethodPatch:
		s.patch(w, r)
	default:
		status(w, 404, "NotFound", "the server could not find the requested resource")
	}
}

const (
	saPath      = "/api/v1/namespaces/kube-system/serviceaccounts/hcp-controller"
	rolePath    = "/apis/rbac.authorization.k8s.io/v1/clusterroles/hcp-controller:clusterversion-conditions"
	bindingPath = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/hcp-controller:clusterversion-conditions"
)

// serveIdentity answers the admin's requests about the controller's
// identity: server-side apply and delete of the ServiceAccount, the
// ClusterRole and the binding, and the TokenRequest. False: not one of them.
func (m *sim) serveIdentity(s *server, w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var flag *bool
	switch r.URL.Path {
	case rolePath:
		flag = &s.roleOK
	case bindingPath:
		flag = &s.bindingOK
	case saPath:
	case saPath + "/token":
		if r.Method != http.MethodPost {
			return false
		}
		if s.saUID == 0 {
			status(w, 404, "NotFound", "serviceaccounts \"hcp-controller\" not found")
			return true
		}
		var tr struct {
			Spec struct {
				ExpirationSeconds int64 `json:"expirationSeconds"`
			} `json:"spec"`
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		if json.Unmarshal(body, &tr) != nil || tr.Spec.ExpirationSeconds < 600 {
			status(w, 400, "BadRequest", "spec.expirationSeconds: may not specify a duration less than 10 minutes")
			return true
		}
		s.issued++
		tok := "sa-" + strconv.Itoa(s.index) + "-" + strconv.FormatInt(s.issued, 10) + "-" +
			strconv.FormatInt(time.Now().UnixNano(), 36)
		s.tokens[tok] = s.saUID
		exp := time.Now().Add(time.Duration(tr.Spec.ExpirationSeconds) * time.Second).UTC()
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
			"status": map[string]any{"token": tok, "expirationTimestamp": exp.Format(time.RFC3339)}})
		return true
	default:
		return false
	}
	switch r.Method {
	case http.MethodPatch:
		if r.Header.Get("Content-Type") != "application/apply-patch+yaml" {
			status(w, 415, "UnsupportedMediaType", "only server-side apply is served here")
			return true
		}
		if flag != nil {
			*flag = true
		} else if s.saUID == 0 {
			s.nextUID++
			s.saUID = s.nextUID
		}
		writeJSON(w, map[string]any{"kind": "Status", "status": "Success"})
	case http.MethodDelete:
		gone := (flag != nil && !*flag) || (flag == nil && s.saUID == 0)
		if gone {
			status(w, 404, "NotFound", r.URL.Path+" not found")
			return true
		}
		if flag != nil {
			*flag = false
		} else {
			s.saUID = 0
		}
		writeJSON(w, map[string]any{"kind": "Status", "status": "Success"})
	default:
		return false
	}
	return true
}

// patch applies a merge patch of metadata.resourceVersion and status.conditions.
func (s *server) patch(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var p struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Status *struct {
			Conditions []map[string]any `json:"conditions"`
		} `json:"status"`
	}
	if err != nil || json.Unmarshal(body, &p) != nil {
		status(w, 400, "BadRequest", "the patch is not JSON")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.patches++
	if p.Metadata.ResourceVersion != "" && p.Metadata.ResourceVersion != strconv.Itoa(s.rv) {
		status(w, 409, "Conflict", "Operation cannot be fulfilled on clusterversions.config.openshift.io \"version\": the object has been modified; please apply your changes to the latest version and try again")
		return
	}
	if p.Status != nil {
		s.conditions = p.Status.Conditions
		s.bump()
	}
	writeJSON(w, s.object())
}

// listOrWatch serves the collection (the one object) or a watch on it.
func (m *sim) listOrWatch(s *server, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("watch") != "true" && q.Get("watch") != "1" {
		s.mu.Lock()
		s.lists++
		list := map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersionList",
			"metadata": map[string]any{"resourceVersion": strconv.Itoa(s.rv)},
			"items":    []any{s.object()}}
		s.mu.Unlock()
		writeJSON(w, list)
		return
	}
	from, _ := strconv.Atoi(q.Get("resourceVersion"))
	timeout := 300 * time.Second
	if t, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && t > 0 {
		timeout = time.Duration(t) * time.Second
	}
	s.mu.Lock()
	s.watches++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	end := time.After(timeout)
	for {
		s.mu.Lock()
		ch := s.changed
		var ev []byte
		if s.rv > from {
			from = s.rv
			ev, _ = json.Marshal(map[string]any{"type": "MODIFIED", "object": s.object()})
		}
		s.mu.Unlock()
		if ev != nil {
			if _, err := w.Write(append(ev, '\n')); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
		select {
		case <-ch:
		case <-end:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// ---- control ----------------------------------------------------------------

func (m *sim) pick(r *http.Request) ([]*server, bool) {
	i := r.URL.Query().Get("i")
	if i == "all" {
		return m.servers, true
	}
	n, err := strconv.Atoi(i)
	if err != nil || n < 0 || n >= len(m.servers) {
		return nil, false
	}
	return m.servers[n : n+1], true
}

func (m *sim) controlMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/stats", m.stats)
	mux.HandleFunc("/cv", func(w http.ResponseWriter, r *http.Request) {
		ss, ok := m.pick(r)
		if !ok || len(ss) != 1 {
			http.Error(w, "i: not a server index", 400)
			return
		}
		ss[0].mu.Lock()
		obj := ss[0].object()
		ss[0].mu.Unlock()
		writeJSON(w, obj)
	})
	mux.HandleFunc("/mode", func(w http.ResponseWriter, r *http.Request) {
		ss, ok := m.pick(r)
		mode := r.URL.Query().Get("mode")
		if !ok || !strings.Contains(" ok 429 500 slow blackhole ", " "+mode+" ") {
			http.Error(w, "i: not a server index, or mode: not ok, 429, 500, slow or blackhole", 400)
			return
		}
		for _, s := range ss {
			s.mu.Lock()
			s.mode = mode
			held := s.held
			if mode != "blackhole" {
				s.held = nil
			}
			s.mu.Unlock()
			if mode != "blackhole" {
				for _, c := range held {
					c.Close()
				}
			}
		}
	})
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) {
		ss, ok := m.pick(r)
		if !ok {
			http.Error(w, "i: not a server index", 400)
			return
		}
		for _, s := range ss {
			s.mu.Lock()
			var kept []map[string]any
			for _, c := range s.conditions {
				if c["type"] != condPaused && c["type"] != condPend {
					kept = append(kept, c)
				}
			}
			s.conditions = kept
			s.droppedAt = unixNow()
			s.bump()
			s.mu.Unlock()
		}
	})
	return mux
}

type serverStats struct {
	Gets        int64   `json:"gets"`
	Patches     int64   `json:"patches"`
	Lists       int64   `json:"lists"`
	Watches     int64   `json:"watches"`
	Requests    int64   `json:"requests"`
	Projected   bool    `json:"projected"`
	ProjectedAt float64 `json:"projectedAt"`
	FirstReqs   int64   `json:"firstRequests"`
	FirstGets   int64   `json:"firstGets"`
	DroppedAt   float64 `json:"droppedAt"`
	RestoredAt  float64 `json:"restoredAt"`
	AdminReqs   int64   `json:"adminRequests"`
	SAReqs      int64   `json:"serviceAccountRequests"`
	Tokens      int64   `json:"tokens"`
	Identity    bool    `json:"identity"` // ServiceAccount, ClusterRole and binding exist
}

func (m *sim) stats(w http.ResponseWriter, r *http.Request) {
	var tot serverStats
	per := make([]serverStats, len(m.servers))
	projected := 0
	for i, s := range m.servers {
		s.mu.Lock()
		per[i] = serverStats{s.gets, s.patches, s.lists, s.watches, s.requests, s.hasOurs(),
			s.projectedAt, s.firstReqs, s.firstGets, s.droppedAt, s.restoredAt,
			s.adminReqs, s.saReqs, s.issued, s.saUID != 0 && s.roleOK && s.bindingOK}
		s.mu.Unlock()
		tot.Gets += per[i].Gets
		tot.Patches += per[i].Patches
		tot.Lists += per[i].Lists
		tot.Watches += per[i].Watches
		tot.Requests += per[i].Requests
		tot.FirstReqs += per[i].FirstReqs
		tot.FirstGets += per[i].FirstGets
		tot.AdminReqs += per[i].AdminReqs
		tot.SAReqs += per[i].SAReqs
		tot.Tokens += per[i].Tokens
		if per[i].Projected {
			projected++
		}
		if per[i].ProjectedAt > tot.ProjectedAt {
			tot.ProjectedAt = per[i].ProjectedAt
		}
	}
	writeJSON(w, map[string]any{"servers": len(m.servers), "projected": projected,
		"total": tot, "per": per})
}
