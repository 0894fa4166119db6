// svcproxy plays a Kubernetes Service for e2e/controller/test_rolling.sh:
// the address the API server calls the webhooks at, forwarding each TCP
// connection to one of the replicas listed in an endpoints file, round
// robin, as kube-proxy does for a ClusterIP (pkg/proxy/iptables: a
// connection is DNATed to one ready endpoint when it opens and stays with
// it, conntrack, until either side closes it; a later change of the
// endpoints moves new connections only). TLS passes through untouched: the
// replicas serve the webhook certificate themselves, as they do behind a
// real Service.
//
// The test rewrites the endpoints file (one host:port a line, replaced by a
// rename) as the endpoints controller would rewrite the EndpointSlice; the
// file is read again when a connection opens, so a change applies from the
// next connection on, with no lag of its own (the test adds the lag a
// cluster has). A connection routed to an endpoint that does not answer is
// closed (the caller sees it refused or reset, as with a DNAT to a pod that
// is gone); it is counted and logged, never retried elsewhere.
//
//	svcproxy --endpoints FILE --port-file FILE [--listen 127.0.0.1:0]
//
// Writes the port it listens on to --port-file once listening. Logs one
// line per connection to stderr. On SIGTERM it prints its counts as JSON
// on stdout and exits 0.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

type counts struct {
	Connections   int            `json:"connections"`    // accepted
	Routed        map[string]int `json:"routed"`         // by endpoint
	NoEndpoints   int            `json:"no_endpoints"`   // closed: the list was empty
	DialFailed    map[string]int `json:"dial_failed"`    // by endpoint: routed there, nothing answered
	EndpointsRead int            `json:"endpoints_read"` // times the file was read
}

type proxy struct {
	file string
	mu   sync.Mutex
	next int
	c    counts
}

// endpoints reads the current list (empty on a read error: no endpoints).
func (p *proxy) endpoints() []string {
	data, err := os.ReadFile(p.file)
	if err != nil {
		return nil
	}
	var eps []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			eps = append(eps, l)
		}
	}
	return eps
}

// pick chooses the endpoint of a new connection, round robin over the list
// as it is now ("" when it is empty).
func (p *proxy) pick(id int) string {
	eps := p.endpoints()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.c.EndpointsRead++
	p.c.Connections++
	if len(eps) == 0 {
		p.c.NoEndpoints++
		return ""
	}
	ep := eps[p.next%len(eps)]
	p.next++
	p.c.Routed[ep]++
	return ep
}

func (p *proxy) serve(id int, in *net.TCPConn) {
	defer in.Close()
	ep := p.pick(id)
	if ep == "" {
		log.Printf("conn %d: no endpoints, closed", id)
		return
	}
	out, err := net.DialTimeout("tcp", ep, 2*time.Second)
	if err != nil {
		p.mu.Lock()
		p.c.DialFailed[ep]++
		p.mu.Unlock()
		log.Printf("conn %d -> %s: dial failed: %v", id, ep, err)
		// An RST, as a DNAT to a closed port gives the caller.
		in.SetLinger(0)
		return
	}
	log.Printf("conn %d -> %s", id, ep)
	o := out.(*net.TCPConn)
	defer o.Close()
	var wg sync.WaitGroup
	pipe := func(dst, src *net.TCPConn) {
		defer wg.Done()
		io.Copy(dst, src)
		dst.CloseWrite() // pass the half-close on
	}
	wg.Add(2)
	go pipe(o, in)
	go pipe(in, o)
	wg.Wait()
	log.Printf("conn %d -> %s: closed", id, ep)
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	file := flag.String("endpoints", "", "the endpoints file (host:port a line)")
	portFile := flag.String("port-file", "", "write the port listened on here")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds | log.LUTC)
	if *file == "" || *portFile == "" {
		fmt.Fprintln(os.Stderr, "usage: svcproxy --endpoints FILE --port-file FILE [--listen ADDR]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen %s: %v", *listen, err)
	}
	p := &proxy{file: *file, c: counts{Routed: map[string]int{}, DialFailed: map[string]int{}}}
	port := ln.Addr().(*net.TCPAddr).Port
	tmp := *portFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(fmt.Sprintf("%d\n", port)), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := os.Rename(tmp, *portFile); err != nil {
		log.Fatal(err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-sig
		p.mu.Lock()
		json.NewEncoder(os.Stdout).Encode(p.c)
		p.mu.Unlock()
		os.Exit(0)
	}()
	for id := 1; ; id++ {
		c, err := ln.Accept()
		if err != nil {
			log.Fatalf("accept: %v", err)
		}
		go p.serve(id, c.(*net.TCPConn))
	}
}
