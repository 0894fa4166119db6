package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// clock is the simulated clock hcp-controller also runs with
// (--simulated-start-time, --time-scale): simulated = start + (real - t0) *
// scale, so that the model's timestamps compare with the controller's when
// both start from the same instant with the same scale.
type clock struct {
	start time.Time // simulated instant at t0
	t0    time.Time // real instant the clock started
	scale float64   // simulated seconds per real second
}

// newClock starts the clock at start (RFC 3339; "" for the real time now)
// with the given scale; anchor, when not 0, is the real instant (Unix
// seconds) the clock reads start at instead of now.
func newClock(start string, scale, anchor float64) (*clock, error) {
	if scale <= 0 {
		return nil, fmt.Errorf("--time-scale must be positive, not %g", scale)
	}
	now := time.Now()
	c := &clock{start: now, t0: now, scale: scale}
	if anchor != 0 {
		c.t0 = time.Unix(0, int64(anchor*1e9))
	}
	if start != "" {
		t, err := time.Parse(time.RFC3339, start)
		if err != nil {
			return nil, fmt.Errorf("--simulated-start-time: %v", err)
		}
		c.start = t
	}
	return c, nil
}

func (c *clock) now() time.Time {
	return c.start.Add(time.Duration(float64(time.Since(c.t0)) * c.scale))
}

// real converts a simulated duration into the real time it takes.
func (c *clock) real(d time.Duration) time.Duration {
	return time.Duration(float64(d) / c.scale)
}

// Record kinds. Each is one thing that really happens on a management
// cluster; README.md says which upstream code starts it.
const (
	evCPCreated       = "controlplane-created"    // the HostedControlPlane first gets a release
	evCPInitiation    = "controlplane-initiation" // the control plane starts rolling to another release
	evCPCompleted     = "controlplane-completed"  // status.version.history[0] of a release becomes Completed (--hc-status)
	evPaused          = "reconcile-paused"        // spec.pausedUntil stops an object's reconcile
	evResumed         = "reconcile-resumed"       // ... and it reconciles again
	evMSCreated       = "machineset-created"      // a MachineDeployment gets a MachineSet for a new template
	evReplaceStart    = "replacement-start"       // an old machine starts being replaced
	evMSScaleUp       = "machineset-scale-up"     // Cluster API raises a MachineDeployment's MachineSet's replicas (real Cluster API only)
	evMDPaused        = "deployment-paused"       // a MachineDeployment's Cluster API pause annotation appears (real Cluster API only)
	evMDUnpaused      = "deployment-unpaused"     // ... and goes
	evReplaceDone     = "replacement-done"        // its replacement is ready and it is gone
	evInPlaceStart    = "inplace-update-start"    // a machine starts an in-place update
	evInPlaceDone     = "inplace-update-done"     // ... and has finished it
	evInPlaceFailed   = "inplace-update-failed"   // ... and turned degraded instead (--fail-inplace)
	evScale           = "scale"                   // replicas of a MachineDeployment/MachineSet change
	evMachineCreated  = "machine-created"         // a machine is added (scale-up)
	evMachineDeleted  = "machine-deleted"         // a machine is removed (scale-down)
	evRemediation     = "remediation-replacement" // a machine deleted by remediation is replaced
	evTargetConfigSet = "inplace-target-set"      // HyperShift writes the MachineSet target config version
	evStatusUpdate    = "status-update"           // HyperShift writes a HostedCluster's or NodePool's conditions
	evStatusConflict  = "status-conflict"         // ... and its Status().Update met a newer object (409)
)

// entry is one line of the record.
type entry struct {
	At     string `json:"at"`             // simulated time, RFC 3339 with milliseconds
	Real   string `json:"real"`           // real time
	Event  string `json:"event"`          // one of the ev* kinds
	Kind   string `json:"kind"`           // kind of the object it is about
	Object string `json:"object"`         // namespace/name
	From   string `json:"from,omitempty"` // previous value (release, replicas, machine)
	To     string `json:"to,omitempty"`   // new value
	Detail string `json:"detail,omitempty"`
}

// recorder keeps the record in memory (for /records and /summary), appends
// it to a file, and counts the model's own writes and the updates it
// observes per object.
type recorder struct {
	mu       sync.Mutex
	clk      *clock
	f        *os.File
	w        *bufio.Writer
	entries  []entry
	writes   map[string]int // "Kind ns/name" -> writes by the model
	observed map[string]int // "Kind ns/name" -> updates seen on the watch (anyone's)
}

func newRecorder(path string, clk *clock) (*recorder, error) {
	r := &recorder{clk: clk, writes: map[string]int{}, observed: map[string]int{}}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, err
		}
		r.f, r.w = f, bufio.NewWriter(f)
	}
	return r, nil
}

func (r *recorder) add(event, kind, object, from, to, detail string) {
	e := entry{
		At:    r.clk.now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Real:  time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Event: event, Kind: kind, Object: object, From: from, To: to, Detail: detail,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
	if r.w != nil {
		b, _ := json.Marshal(e)
		_, _ = r.w.Write(append(b, '\n'))
		_ = r.w.Flush()
	}
}

func (r *recorder) wrote(kind, object string) {
	r.mu.Lock()
	r.writes[kind+" "+object]++
	r.mu.Unlock()
}

func (r *recorder) saw(kind, object string) {
	r.mu.Lock()
	r.observed[kind+" "+object]++
	r.mu.Unlock()
}

// summary is what /summary serves: counts of every record kind overall and
// per object, the writes per object, and the simulated time now.
type summary struct {
	Now      string                    `json:"now"`
	Events   map[string]int            `json:"events"`
	Objects  map[string]map[string]int `json:"objects"`
	Writes   map[string]int            `json:"writes"`
	Observed map[string]int            `json:"observed"`
	Last     map[string]string         `json:"last"` // "event Kind ns/name" -> simulated time of the last one
}

func (r *recorder) summary() summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := summary{
		Now:      r.clk.now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Events:   map[string]int{},
		Objects:  map[string]map[string]int{},
		Writes:   map[string]int{},
		Observed: map[string]int{},
		Last:     map[string]string{},
	}
	for _, e := range r.entries {
		s.Events[e.Event]++
		key := e.Kind + " " + e.Object
		if s.Objects[key] == nil {
			s.Objects[key] = map[string]int{}
		}
		s.Objects[key][e.Event]++
		s.Last[e.Event+" "+key] = e.At
	}
	for k, v := range r.writes {
		s.Writes[k] = v
	}
	for k, v := range r.observed {
		s.Observed[k] = v
	}
	return s
}

func (r *recorder) writeAll(w io.Writer) {
	r.mu.Lock()
	es := append([]entry(nil), r.entries...)
	r.mu.Unlock()
	enc := json.NewEncoder(w)
	for _, e := range es {
		_ = enc.Encode(e)
	}
}

func (r *recorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		_ = r.w.Flush()
		_ = r.f.Close()
	}
}
