// hostedsim serves N hosted API servers from one process, each on its own
// TLS port of 127.0.0.1 with its own ClusterVersion `version` (HyperShift's
// conditions), for the hosted ClusterVersion projection's e2e test and
// benchmark. Only what the projection uses is served: GET and merge-PATCH of
// clusterversions/version and its status (resourceVersion preconditions
// answered with 409), and the list and watch of the collection; with the
// kubeconfig's admin token, the server-side apply and delete of the
// controller's ServiceAccount kube-system/hcp-controller, its ClusterRole
// and binding, and TokenRequests of it. A ServiceAccount token is refused
// (401) once its ServiceAccount is gone and may only get
// clusterversions/version and patch its status while the ClusterRole and
// the binding exist (else 403), as kube-apiserver's RBAC would.
//
// Usage: hostedsim -n N -dir DIR
//
// DIR receives ca.crt, kubeconfig/<i>.yaml (i = 0..N-1, token auth) and the
// same base64-encoded as a Secret holds it (kubeconfig/<i>.b64) and, once
// everything listens, `control` holding the control address
// (http://127.0.0.1:PORT). The control API (plain HTTP):
//
//	GET  /stats                 totals and per-server counts as JSON
//	GET  /cv?i=I                server I's ClusterVersion
//	POST /mode?i=I&mode=M       M: ok, 429, 500, slow (answers after 5 s), or
//	                            blackhole (new connections are accepted but
//	                            never answered, requests in flight hang);
//	                            i=all for every server
//	POST /drop?i=I              a foreign writer removes ChangesPaused and
//	                            ChangesPending from server I's ClusterVersion
//
// A server counts as projected once its ClusterVersion carries both
// conditions; /stats reports when each became so (in Unix seconds) and how
// many requests it had answered by then, and when each drop was undone.
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

const token = "hostedsim"

func main() {
	n := flag.Int("n", 1000, "hosted API servers")
	dir := flag.String("dir", "", "output directory")
	flag.Parse()
	if *dir == "" || *n < 1 {
		log.Fatal("usage: hostedsim -n N -dir DIR")
	}
	certPEM, cert := makeCert()
	must(os.MkdirAll(filepath.Join(*dir, "kubeconfig"), 0o755))
	must(os.WriteFile(filepath.Join(*dir, "ca.crt"), certPEM, 0o644))
	sim := &sim{servers: make([]*server, *n), byPort: map[int]int{}}
	tlsCfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"h2", "http/1.1"}}
	hs := &http.Server{Handler: http.HandlerFunc(sim.serveAPI), TLSConfig: tlsCfg,
		ConnContext: sim.connContext, ErrorLog: log.New(nopWriter{}, "", 0)}
	for i := range sim.servers {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(err)
		port := l.Addr().(*net.TCPAddr).Port
		s := newServer(i)
		sim.servers[i] = s
		sim.byPort[port] = i
		kc := fmt.Sprintf(kubeconfigFmt, port, base64.StdEncoding.EncodeToString(certPEM), token)
		must(os.WriteFile(filepath.Join(*dir, "kubeconfig", strconv.Itoa(i)+".yaml"), []byte(kc), 0o644))
		must(os.WriteFile(filepath.Join(*dir, "kubeconfig", strconv.Itoa(i)+".b64"),
			[]byte(base64.StdEncoding.EncodeToString([]byte(kc))), 0o644))
		go func() { _ = hs.Serve(tls.NewListener(&holdListener{Listener: l, s: s}, tlsCfg)) }()
	}
	cl, err := net.Listen("tcp", "127.0.0.1:0")
	must(err)
	ctl := "http://" + cl.Addr().String()
	tmp := filepath.Join(*dir, "control.tmp")
	must(os.WriteFile(tmp, []byte(ctl+"\n"), 0o644))
	must(os.Rename(tmp, filepath.Join(*dir, "control")))
	log.Printf("hostedsim: %d servers, control %s", *n, ctl)
	log.Fatal(http.Serve(cl, sim.controlMux()))
}

const kubeconfigFmt = `apiVersion: v1
kind: Config
clusters:
- name: hosted
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: hosted
  context: {cluster: hosted, user: admin}
current-context: hosted
`

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// makeCert returns a self-signed certificate for 127.0.0.1, which is also
// the CA of every kubeconfig.
func makeCert() ([]byte, tls.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(err)
	tpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hostedsim"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	must(err)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kder, err := x509.MarshalECPrivateKey(key)
	must(err)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	must(err)
	return certPEM, cert
}

// holdListener accepts connections; while its server is blackholed it keeps
// them open without ever reading (no TLS handshake, no answer).
type holdListener struct {
	net.Listener
	s *server
}

func (l *holdListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.s.getMode() != "blackhole" {
			return c, nil
		}
		l.s.mu.Lock()
		l.s.held = append(l.s.held, c)
		l.s.mu.Unlock()
	}
}
