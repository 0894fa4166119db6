// Command hcp-model is a behaviour model of HyperShift and Cluster API for the
// end-to-end tests: it runs beside hcp-controller against the test API
// server, reconciles HostedClusters and NodePools the way HyperShift does and
// rolls MachineDeployments and MachineSets the way Cluster API does, and
// records every change that really starts (a control-plane initiation, a
// machine replacement, an in-place update, a scale), so that a test measures
// what would happen on a real management cluster rather than which
// annotations exist. README.md lists each modelled behaviour with its
// upstream source.
//
// Test infrastructure only; never shipped.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	var (
		kubeconfig  = flag.String("kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig of the management cluster")
		namespace   = flag.String("namespace", "", "only HostedClusters and NodePools of this namespace (and their control-plane namespaces <ns>-<cluster>); all when empty")
		simStart    = flag.String("simulated-start-time", "", "RFC 3339 instant the simulated clock starts at (default: the real clock)")
		timeScale   = flag.Float64("time-scale", 1, "simulated seconds per real second")
		anchor      = flag.Float64("clock-anchor", 0, "real instant (Unix seconds, decimals allowed) at which the simulated clock reads --simulated-start-time; default: when the model starts. Give the instant another program's clock started at to share it")
		recordFile  = flag.String("record-file", "", "append the record (JSON lines) to this file")
		listen      = flag.String("listen", "127.0.0.1:0", "address of the HTTP endpoint (/readyz, /summary, /records)")
		portFile    = flag.String("port-file", "", "write the HTTP port chosen to this file once ready")
		replaceDur  = flag.Duration("replacement-duration", 10*time.Minute, "simulated time one machine replacement (or in-place update) takes")
		machineDur  = flag.Duration("provision-duration", 0, "simulated time a machine added by a scale-up or remediation takes to become ready")
		writeStatus = flag.Bool("capi-status", true, "write MachineDeployment and MachineSet status as Cluster API does")
		hcStatus    = flag.Bool("hc-status", false, "write HostedCluster status.version as HyperShift does (desired image, history Partial then Completed)")
		conditions  = flag.Bool("status-conditions", true, "write HyperShift's ReconciliationActive condition into HostedCluster (Status().Update from the cache) and NodePool (merge patch of the status) status, as HyperShift does on its reconciles")
		cpUpdate    = flag.Duration("controlplane-update-duration", 30*time.Minute, "simulated time a control-plane update takes to complete (with --hc-status)")
		tokenTTL    = flag.Duration("token-ttl", 2*time.Hour, "simulated time an outdated ignition token stays valid once its NodePool has a new target (HyperShift: 2h)")
		realCAPI    = flag.Bool("real-capi", false, "Cluster API's own controllers run (e2e/capi): model only HyperShift, write the Cluster API objects it writes, play the control-plane provider, and record machine events from the real Machines")
		mStartup    = flag.Duration("machine-startup", 2*time.Second, "with --real-capi: real time the in-memory backend takes to start a machine's VM and then its node")
		npUpdating  = flag.Bool("nodepool-updating-version", false, "write the NodePool's UpdatingVersion condition as HyperShift does (True while status.version is not the target, then False AsExpected; InplaceUpgradeFailed when an in-place update failed)")
		workers     = flag.Int("workers", 1, "reconciles run at once (HyperShift's and Cluster API's controllers run several; 1 keeps the model's reconciles strictly one at a time)")
		failInPlace = flag.String("fail-inplace", "", "comma-separated NodePools (ns/name) whose in-place update fails: the first machine updated turns degraded and the upgrader stops")
	)
	flag.Parse()
	if *workers < 1 {
		fmt.Fprintln(os.Stderr, "hcp-model: --workers must be at least 1")
		os.Exit(2)
	}
	log.SetFlags(log.Lmicroseconds | log.LUTC)
	log.SetPrefix("hcp-model: ")

	clk, err := newClock(*simStart, *timeScale, *anchor)
	if err != nil {
		log.Fatalf("%v", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cfg.UserAgent = "hcp-model"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		log.Fatalf("client: %v", err)
	}
	upstream, err := capiUpstreamCRDs(dyn)
	if err != nil {
		log.Fatalf("%v", err)
	}
	rec, err := newRecorder(*recordFile, clk)
	if err != nil {
		log.Fatalf("record file: %v", err)
	}
	defer rec.close()

	m := newModel(dyn, clk, rec, options{
		namespace:   *namespace,
		replacement: *replaceDur,
		provision:   *machineDur,
		capiStatus:  *writeStatus,
		hcStatus:    *hcStatus,
		cpUpdate:    *cpUpdate,
		conditions:  *conditions,
		tokenTTL:    *tokenTTL,

		realCAPI:       *realCAPI,
		capiUpstream:   *realCAPI || upstream,
		machineStartup: *mStartup,

		workers: *workers,

		npUpdatingVersion: *npUpdating,
		failInPlace:       splitList(*failInPlace),
	})

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("cannot listen on %s: %v", *listen, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !m.ready.Load() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/summary", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rec.summary())
	})
	mux.HandleFunc("/records", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		rec.writeAll(w)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for range usr1 {
			_ = json.NewEncoder(os.Stderr).Encode(rec.summary())
		}
	}()

	if err := m.start(ctx); err != nil {
		log.Fatalf("%v", err)
	}
	if *portFile != "" {
		port := ln.Addr().(*net.TCPAddr).Port
		if err := os.WriteFile(*portFile, []byte(fmt.Sprintf("%d\n", port)), 0o644); err != nil {
			log.Fatalf("port file: %v", err)
		}
	}
	log.Printf("ready on %s, simulated clock at %s (scale %g)", ln.Addr(), clk.now().Format(time.RFC3339), *timeScale)
	m.run(ctx)

	shutdown, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	_ = srv.Shutdown(shutdown)
	// The final summary goes to stdout, one JSON object, for a test that
	// reads it after SIGTERM.
	_ = json.NewEncoder(os.Stdout).Encode(rec.summary())
	log.Printf("stopped")
}

// splitList: the non-empty items of a comma-separated list, as a set.
func splitList(v string) map[string]bool {
	out := map[string]bool{}
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out[s] = true
		}
	}
	return out
}
