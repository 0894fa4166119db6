package main

// With --real-capi the model's Cluster API half is off and Cluster API's own
// controllers run (e2e/capi: the core manager and the Docker provider's
// in-memory backend). The HyperShift half then writes the Cluster API
// objects the way HyperShift does (a Cluster whose infrastructure is a
// DevCluster, MachineDeployments whose template names a DevMachineTemplate
// and a bootstrap data secret, a MachineHealthCheck per pool) and this file
// plays the control-plane provider; the record's machine events come from
// watching the real Machines and MachineSets.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

var (
	gvrMachine = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machines"}
	gvrMHC     = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinehealthchecks"}
	gvrDevCl   = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Resource: "devclusters"}
	gvrDevM    = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Resource: "devmachines"}
	gvrDevMT   = schema.GroupVersionResource{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta2", Resource: "devmachinetemplates"}
	gvrSecret  = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

const (
	infraGroup       = "infrastructure.cluster.x-k8s.io"
	controlPlaneLbl  = "cluster.x-k8s.io/control-plane"
	nodePoolNameLbl  = "hypershift.openshift.io/nodePoolName"
	standInAnn       = "e2e-model.hcp-controller/stands-for"
	controlPlaneVers = "v1.33.0"
)

// inMemoryBackend is spec.backend.inMemory of a DevMachine(Template): how
// long (real time) each simulated part takes to come up.
func (m *model) inMemoryBackend(controlPlane bool) map[string]interface{} {
	p := map[string]interface{}{"provisioning": map[string]interface{}{
		"startupDuration": m.opt.machineStartup.String(), "startupJitter": "0"}}
	b := map[string]interface{}{"vm": p, "node": p}
	if controlPlane {
		b["apiServer"], b["etcd"] = p, p
	}
	return map[string]interface{}{"inMemory": b}
}

// getLive reads an object from the API server (the kinds below have no
// informer); nil when absent.
func (m *model) getLive(ctx context.Context, g schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	u, err := m.dyn.Resource(g).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// ensure creates the object unless it exists.
func (m *model) ensure(ctx context.Context, g schema.GroupVersionResource, u *unstructured.Unstructured) error {
	have, err := m.getLive(ctx, g, u.GetNamespace(), u.GetName())
	if err != nil || have != nil {
		return err
	}
	_, err = m.dyn.Resource(g).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	m.rec.wrote(u.GetKind(), obj(u))
	return nil
}

func newObj(apiVersion, kind, ns, name string, labels map[string]interface{}, spec map[string]interface{}) *unstructured.Unstructured {
	md := map[string]interface{}{"name": name, "namespace": ns}
	if labels != nil {
		md["labels"] = labels
	}
	o := map[string]interface{}{"apiVersion": apiVersion, "kind": kind, "metadata": md}
	if spec != nil {
		o["spec"] = spec
	}
	return &unstructured.Unstructured{Object: o}
}

// caSecret makes a self-signed CA in the layout Cluster API's secret
// package reads (tls.crt, tls.key; RSA, as the in-memory backend asserts).
func caSecret(ns, name, cluster, cn string) (*unstructured.Unstructured, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	u := newObj("v1", "Secret", ns, name, map[string]interface{}{clusterNameLabel: cluster}, nil)
	u.Object["type"] = "cluster.x-k8s.io/secret"
	u.Object["stringData"] = map[string]interface{}{
		"tls.crt": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		"tls.key": string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})),
	}
	return u, nil
}

// realControlPlane plays what HyperShift's HostedCluster controller and the
// control-plane provider give Cluster API for a hosted cluster, once per
// control-plane namespace:
//
//   - the Cluster named after the infraID, its infrastructure a DevCluster
//     (HyperShift: hostedcluster_controller.go reconcileCAPICluster, whose
//     infrastructureRef is the platform's cluster kind; here the in-memory
//     backend's). An existing Cluster without an infrastructureRef (a test
//     fixture) gets one.
//   - the certificate authorities <cluster>-ca and <cluster>-etcd that a
//     control-plane provider writes (cluster-api util/secret: Purpose
//     ClusterCA, EtcdCA); core writes <cluster>-kubeconfig from the CA
//     itself for a Cluster without a controlPlaneRef (cluster controller,
//     reconcileKubeconfig).
//   - one stand-alone control-plane Machine on a DevMachine: the in-memory
//     backend serves a workload cluster's API only for a control-plane
//     machine, and worker machines wait for the control plane to be
//     initialized (inmemorymachine_backend.go ReconcileNormal). HyperShift's
//     control plane is pods, not Machines; this machine is the stand-in.
//
// The DevCluster carries an annotation: v1.14.2's in-memory backend writes
// into DevCluster annotations without making the map (a DevCluster with
// none panics, "assignment to entry in nil map",
// inmemorycluster_backend.go ReconcileNormal).
func (m *model) realControlPlane(ctx context.Context, cpNS, infraID string) error {
	m.mu.Lock()
	done := m.cpDone[cpNS]
	m.mu.Unlock()
	if infraID == "" || done {
		return nil
	}
	labels := func() map[string]interface{} { return map[string]interface{}{clusterNameLabel: infraID} }
	dc := newObj(infraGroup+"/v1beta2", "DevCluster", cpNS, infraID, labels(),
		map[string]interface{}{"backend": map[string]interface{}{"inMemory": map[string]interface{}{}}})
	dc.SetAnnotations(map[string]string{standInAnn: "the hosted cluster's platform cluster"})
	if err := m.ensure(ctx, gvrDevCl, dc); err != nil {
		return err
	}
	for _, s := range []struct{ suffix, cn string }{{"ca", "kubernetes"}, {"etcd", "etcd-ca"}} {
		have, err := m.getLive(ctx, gvrSecret, cpNS, infraID+"-"+s.suffix)
		if err != nil {
			return err
		}
		if have != nil {
			continue
		}
		u, err := caSecret(cpNS, infraID+"-"+s.suffix, infraID, s.cn)
		if err != nil {
			return err
		}
		if err := m.ensure(ctx, gvrSecret, u); err != nil {
			return err
		}
	}
	infraRef := map[string]interface{}{"apiGroup": infraGroup, "kind": "DevCluster", "name": infraID}
	cl, err := m.getLive(ctx, gvrCluster, cpNS, infraID)
	if err != nil {
		return err
	}
	if cl == nil {
		if err := m.ensure(ctx, gvrCluster, newObj("cluster.x-k8s.io/v1beta2", "Cluster", cpNS, infraID, nil,
			map[string]interface{}{"infrastructureRef": infraRef})); err != nil {
			return err
		}
	} else if str(cl, "spec", "infrastructureRef", "name") == "" {
		if err := m.patch(ctx, gvrCluster, "Cluster", cpNS, infraID,
			map[string]interface{}{"spec": map[string]interface{}{"infrastructureRef": infraRef}}); err != nil {
			return err
		}
	}
	cp := infraID + "-control-plane"
	boot := newObj("v1", "Secret", cpNS, cp+"-bootstrap", labels(), nil)
	boot.Object["type"] = "cluster.x-k8s.io/secret"
	boot.Object["stringData"] = map[string]interface{}{"value": "stand-in", "format": "cloud-config"}
	if err := m.ensure(ctx, gvrSecret, boot); err != nil {
		return err
	}
	dm := newObj(infraGroup+"/v1beta2", "DevMachine", cpNS, cp, labels(),
		map[string]interface{}{"backend": m.inMemoryBackend(true)})
	if err := m.ensure(ctx, gvrDevM, dm); err != nil {
		return err
	}
	ml := labels()
	ml[controlPlaneLbl] = ""
	mc := newObj("cluster.x-k8s.io/v1beta2", "Machine", cpNS, cp, ml, map[string]interface{}{
		"clusterName":       infraID,
		"version":           controlPlaneVers,
		"bootstrap":         map[string]interface{}{"dataSecretName": cp + "-bootstrap"},
		"infrastructureRef": map[string]interface{}{"apiGroup": infraGroup, "kind": "DevMachine", "name": cp},
	})
	mc.SetAnnotations(map[string]string{standInAnn: "the hosted control plane"})
	if err := m.ensure(ctx, gvrMachine, mc); err != nil {
		return err
	}
	m.mu.Lock()
	m.cpDone[cpNS] = true
	m.mu.Unlock()
	return nil
}

// resourcesName is the label HyperShift selects a pool's machines by.
//
// Upstream: nodepool/capi.go, generateName(capiClusterName,
// nodePool.Spec.ClusterName, nodePool.GetName()) used as both key and
// value of the MachineDeployment's selector and template labels, and of the
// MachineHealthCheck's selector.
func resourcesName(cluster, pool string) string { return cluster + "-" + pool }

// realTemplate completes a MachineDeployment (or InPlace MachineSet)
// template (mdTemplate) for Cluster API's own CRDs, which require and
// validate it: the cluster name, the selector labels and the machine
// template. With Cluster API's controllers running that is a
// DevMachineTemplate named after the pool and a digest of its spec, created
// when missing; with only its webhooks (no provider to read it), a
// reference to the AWSMachineTemplate HyperShift would write, not created.
// On the fixture CRDs the template stays as mdTemplate wrote it.
//
// Upstream: nodepool/capi.go, reconcileMachineDeployment (template labels
// resourcesName and cluster-name, spec.clusterName, infrastructureRef to the
// machine template) and machineTemplateBuilders/generateMachineTemplateName
// (a new template name whenever its spec changes).
func (m *model) realTemplate(ctx context.Context, np *unstructured.Unstructured, cpNS, infraID string, tmpl map[string]interface{}) error {
	if !m.opt.capiUpstream {
		return nil
	}
	kind, mtName := "AWSMachineTemplate", np.GetName()
	if m.opt.realCAPI {
		spec := map[string]interface{}{"template": map[string]interface{}{"spec": map[string]interface{}{"backend": m.inMemoryBackend(false)}}}
		kind, mtName = "DevMachineTemplate", np.GetName()+"-"+shortHash(spec)
		mt := newObj(infraGroup+"/v1beta2", kind, cpNS, mtName, nil, spec)
		mt.SetAnnotations(map[string]string{nodePoolAnn: obj(np)})
		if err := m.ensure(ctx, gvrDevMT, mt); err != nil {
			return err
		}
	}
	rn := resourcesName(str(np, "spec", "clusterName"), np.GetName())
	meta, _ := tmpl["metadata"].(map[string]interface{})
	if meta == nil {
		meta = map[string]interface{}{}
		tmpl["metadata"] = meta
	}
	meta["labels"] = map[string]interface{}{rn: rn, clusterNameLabel: infraID}
	s, _ := tmpl["spec"].(map[string]interface{})
	s["clusterName"] = infraID
	s["infrastructureRef"] = map[string]interface{}{"apiGroup": infraGroup, "kind": kind, "name": mtName}
	return nil
}

// realSpec completes a new MachineDeployment's (or InPlace MachineSet's)
// spec for Cluster API's own CRDs (realMachineDeploymentSpec, realTemplate);
// on the fixture CRDs it leaves it as written.
func (m *model) realSpec(ctx context.Context, np *unstructured.Unstructured, cpNS, infraID string, spec map[string]interface{}) error {
	if !m.opt.capiUpstream {
		return nil
	}
	realMachineDeploymentSpec(np, spec)
	return m.realTemplate(ctx, np, cpNS, infraID, spec["template"].(map[string]interface{}))
}

// realMachineDeploymentSpec moves what the model writes for its own Cluster
// API half into the places Cluster API v1beta2 reads: the rolling update
// under spec.rollout.strategy (an InPlace MachineSet has none), and
// HyperShift's selector.
func realMachineDeploymentSpec(np *unstructured.Unstructured, spec map[string]interface{}) {
	if st, ok := spec["strategy"]; ok {
		delete(spec, "strategy")
		spec["rollout"] = map[string]interface{}{"strategy": st}
	}
	rn := resourcesName(str(np, "spec", "clusterName"), np.GetName())
	spec["selector"] = map[string]interface{}{"matchLabels": map[string]interface{}{rn: rn}}
}

// realMachineHealthCheck writes the pool's MachineHealthCheck as HyperShift
// does when spec.management.autoRepair is true (and deletes it when not).
//
// Upstream: nodepool/capi.go, reconcileMachineHealthCheck: named after the
// pool, selecting resourcesName, Ready False or Unknown for 8 minutes (16 on
// the Agent and None platforms), maxUnhealthy 2, nodeStartupTimeout 20
// minutes. The model writes v1beta2 (unhealthyNodeConditions,
// remediation.triggerIf.unhealthyLessThanOrEqualTo).
func (m *model) realMachineHealthCheck(ctx context.Context, np *unstructured.Unstructured, cpNS, infraID string) error {
	auto, _, _ := unstructured.NestedBool(np.Object, "spec", "management", "autoRepair")
	have, err := m.getLive(ctx, gvrMHC, cpNS, np.GetName())
	if err != nil {
		return err
	}
	if !auto {
		if have != nil {
			return m.remove(ctx, gvrMHC, "MachineHealthCheck", cpNS, np.GetName())
		}
		return nil
	}
	if have != nil {
		return nil
	}
	timeout := int64(8 * 60)
	if t := str(np, "spec", "platform", "type"); t == "Agent" || t == "None" {
		timeout = 16 * 60
	}
	rn := resourcesName(str(np, "spec", "clusterName"), np.GetName())
	cond := func(status string) map[string]interface{} {
		return map[string]interface{}{"type": "Ready", "status": status, "timeoutSeconds": timeout}
	}
	mhc := newObj("cluster.x-k8s.io/v1beta2", "MachineHealthCheck", cpNS, np.GetName(), nil, map[string]interface{}{
		"clusterName": infraID,
		"selector":    map[string]interface{}{"matchLabels": map[string]interface{}{rn: rn}},
		"checks": map[string]interface{}{
			"nodeStartupTimeoutSeconds": int64(20 * 60),
			"unhealthyNodeConditions":   []interface{}{cond("False"), cond("Unknown")},
		},
		"remediation": map[string]interface{}{"triggerIf": map[string]interface{}{"unhealthyLessThanOrEqualTo": int64(2)}},
	})
	mhc.SetAnnotations(map[string]string{nodePoolAnn: obj(np)})
	return m.ensure(ctx, gvrMHC, mhc)
}

// ---- the record from the real Machines --------------------------------------

// observer turns the events of the real Machines and MachineSets into the
// model's record, with the same events and objects as the model's own
// Cluster API half (object: the MachineDeployment "ns/name"):
//
//	machine-created          a machine added with the template all live
//	                         machines of its MachineDeployment have
//	remediation-replacement  ... added after a machine its MachineHealthCheck
//	                         found unhealthy went
//	replacement-start        a machine added while live machines of another
//	                         template remain (a rollout step)
//	machineset-scale-up      a MachineSet of a MachineDeployment given more
//	                         replicas (from: before, to: after, detail: the
//	                         MachineSet): Cluster API's decision to add a
//	                         machine (a rollout step or a scale), which its
//	                         MachineSet controller then carries out; the
//	                         machine's own replacement-start comes later by
//	                         that controller's pace
//	deployment-paused        a MachineDeployment's cluster.x-k8s.io/paused
//	                         annotation seen "true" on the watch: from
//	                         about then, Cluster API's MachineDeployment
//	                         controller starts no reconcile of it; one under
//	                         way when the pause landed still finishes, and
//	                         may still give a MachineSet a machine more
//	deployment-unpaused      ... and no longer "true"
//	replacement-done         a machine of an older template deleted while one
//	                         of the newer exists
//	machine-deleted          any other machine deleted
//	scale                    the MachineSets' replicas reach a new total that
//	                         equals the MachineDeployment's
//	bootstrap-failed         a machine added whose user-data Secret
//	                         (spec.bootstrap.dataSecretName) is gone or whose
//	                         ignition token is gone or expired (tokens.go,
//	                         bootstrapProblem): on HyperShift it never
//	                         becomes a node (from: its MachineSet, to: the
//	                         machine, detail: why). The in-memory backend
//	                         reads no user data and brings it up anyway; the
//	                         record is the verdict.
type observer struct {
	mu        sync.Mutex
	m         *model
	seen      map[string]bool   // machine (or "MachineSet " + key) -> add recorded
	gone      map[string]bool   // machine key -> deletion recorded
	remediate map[string]int    // MachineDeployment -> remediated machines not yet replaced
	desired   map[string]int64  // MachineDeployment -> total last recorded
	tmplOf    map[string]string // machine key -> template key
	setSize   map[string]int64  // MachineSet of a MachineDeployment -> spec.replicas last seen
	paused    map[string]bool   // MachineDeployment -> its pause annotation last seen "true"
}

func newObserver(m *model) *observer {
	return &observer{m: m, seen: map[string]bool{}, gone: map[string]bool{}, remediate: map[string]int{},
		desired: map[string]int64{}, tmplOf: map[string]string{}, setSize: map[string]int64{},
		paused: map[string]bool{}}
}

// machineTemplate: what makes two machines of one MachineDeployment alike:
// the MachineSet they belong to (one per template) and what HyperShift
// changes in it. (Each machine's infrastructureRef names its own DevMachine.)
func machineTemplate(u *unstructured.Unstructured) string {
	return u.GetLabels()[msNameLabel] + "|" + str(u, "spec", "version") + "|" +
		str(u, "spec", "bootstrap", "dataSecretName")
}

func condStatus(u *unstructured.Unstructured, t string) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range cs {
		if cm, ok := c.(map[string]interface{}); ok && cm["type"] == t {
			s, _ := cm["status"].(string)
			return s
		}
	}
	return ""
}

func (o *observer) handlers(g schema.GroupVersionResource) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(x interface{}) { o.event(g, x, false) },
		UpdateFunc: func(_, x interface{}) { o.event(g, x, false) },
		DeleteFunc: func(x interface{}) { o.event(g, x, true) },
	}
}

func (o *observer) event(g schema.GroupVersionResource, x interface{}, deleted bool) {
	if t, ok := x.(cache.DeletedFinalStateUnknown); ok {
		x = t.Obj
	}
	u, ok := x.(*unstructured.Unstructured)
	if !ok || !o.m.inScope(u.GetNamespace(), true) {
		return
	}
	// The owner the record names: the MachineDeployment, or for an InPlace
	// pool its MachineSet (no MachineDeployment).
	own := owner{kind: "MachineDeployment", label: mdNameLabel, name: u.GetLabels()[mdNameLabel]}
	switch {
	case g == gvrMD:
		own.name = u.GetName()
	case own.name == "" && g == gvrMS:
		own = owner{kind: "MachineSet", label: msNameLabel, name: u.GetName()}
	case own.name == "" && g == gvrMachine:
		own = owner{kind: "MachineSet", label: msNameLabel, name: u.GetLabels()[msNameLabel]}
	}
	if own.name == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if own.kind == "MachineSet" && g == gvrMS {
		o.scaleSet(u, deleted)
		return
	}
	if g == gvrMS || g == gvrMD {
		// A MachineSet first seen: Cluster API started the deployment's
		// rollout to a template (its first, or a new one).
		if k := "MachineSet " + obj(u); g == gvrMS && !deleted && !o.seen[k] {
			o.seen[k] = true
			o.m.rec.add(evMSCreated, "MachineDeployment", u.GetNamespace()+"/"+own.name, "", u.GetName(), "")
		}
		if g == gvrMS {
			o.setScaled(u, own.name, deleted)
		} else {
			o.pauseSeen(u, deleted)
		}
		o.scale(u.GetNamespace(), own.name)
		return
	}
	o.machine(u, own, deleted || u.GetDeletionTimestamp() != nil)
}

// owner is what a machine's record names: its MachineDeployment, or the
// MachineSet of an InPlace pool; label is the machines' label that names it.
type owner struct{ kind, label, name string }

// rollingPeers lists the owner's machines not being deleted, from the
// informer's cache, without the one given: those a machine may replace or be
// replaced by. None for an InPlace pool's MachineSet, whose machines are
// updated in place (a new one boots the new template).
func (o *observer) rollingPeers(ns string, own owner, except string) []*unstructured.Unstructured {
	if own.kind != "MachineDeployment" {
		return nil
	}
	var out []*unstructured.Unstructured
	for _, u := range o.m.list(gvrMachine, ns) {
		if u.GetLabels()[own.label] == own.name && u.GetDeletionTimestamp() == nil && u.GetName() != except {
			out = append(out, u)
		}
	}
	return out
}

func (o *observer) machine(u *unstructured.Unstructured, own owner, deleting bool) {
	k := obj(u)
	ns := u.GetNamespace()
	ownObj := ns + "/" + own.name
	if !o.seen[k] {
		o.seen[k] = true
		t := machineTemplate(u)
		o.tmplOf[k] = t
		var old *unstructured.Unstructured
		for _, l := range o.rollingPeers(ns, own, u.GetName()) {
			if machineTemplate(l) != t {
				old = l
				break
			}
		}
		// Checked when the machine is first seen, which is before it
		// boots and fetches its ignition (token.go cleanupOutdated deleted
		// the outdated user data; the ignition server refuses an expired
		// token).
		if why := o.m.bootstrapProblem(ns, str(u, "spec", "bootstrap", "dataSecretName")); why != "" {
			o.m.rec.add(evBootstrapFailed, own.kind, ownObj, u.GetLabels()[msNameLabel], u.GetName(), why)
		}
		switch {
		case old != nil:
			o.m.rec.add(evReplaceStart, own.kind, ownObj, old.GetName(), u.GetName(), u.GetLabels()[msNameLabel])
		case o.remediate[ownObj] > 0:
			o.remediate[ownObj]--
			o.m.rec.add(evRemediation, own.kind, ownObj, "", u.GetName(), u.GetLabels()[msNameLabel])
		default:
			o.m.rec.add(evMachineCreated, own.kind, ownObj, "", u.GetName(), u.GetLabels()[msNameLabel])
		}
	}
	if !deleting || o.gone[k] {
		return
	}
	o.gone[k] = true
	t := o.tmplOf[k]
	for _, l := range o.rollingPeers(ns, own, u.GetName()) {
		if machineTemplate(l) != t && l.GetCreationTimestamp().After(u.GetCreationTimestamp().Time) {
			o.m.rec.add(evReplaceDone, own.kind, ownObj, u.GetName(), l.GetName(), "")
			return
		}
	}
	// Remediation: the MachineHealthCheck marked it (HealthCheckSucceeded
	// False) and its owner is remediating it (OwnerRemediated).
	if condStatus(u, "HealthCheckSucceeded") == "False" || condStatus(u, "OwnerRemediated") != "" {
		o.remediate[ownObj]++
		o.m.rec.add(evMachineDeleted, own.kind, ownObj, u.GetName(), "", "remediation")
		return
	}
	o.m.rec.add(evMachineDeleted, own.kind, ownObj, u.GetName(), "", u.GetLabels()[msNameLabel])
}

// setScaled records a MachineDeployment's MachineSet given more replicas
// (from 0 when it is new) when the watch delivers it.
func (o *observer) setScaled(ms *unstructured.Unstructured, md string, deleted bool) {
	k := obj(ms)
	if deleted {
		delete(o.setSize, k)
		return
	}
	want := integer(ms, 0, "spec", "replicas")
	last := o.setSize[k]
	o.setSize[k] = want
	if want > last {
		o.m.rec.add(evMSScaleUp, "MachineDeployment", ms.GetNamespace()+"/"+md,
			strconv.FormatInt(last, 10), strconv.FormatInt(want, 10), ms.GetName())
	}
}

// pauseSeen records a MachineDeployment's pause annotation appearing or
// going (internal/controllers/machinedeployment: a paused MachineDeployment
// is not reconciled, annotations.IsPaused).
func (o *observer) pauseSeen(md *unstructured.Unstructured, deleted bool) {
	k := obj(md)
	now := !deleted && md.GetAnnotations()[pausedAnn] == "true"
	was := o.paused[k]
	if deleted {
		delete(o.paused, k)
	} else {
		o.paused[k] = now
	}
	switch {
	case now && !was:
		o.m.rec.add(evMDPaused, "MachineDeployment", k, "", "", "")
	case was && !now && !deleted:
		o.m.rec.add(evMDUnpaused, "MachineDeployment", k, "", "", "")
	}
}

// scaleSet records a new spec.replicas of an InPlace pool's MachineSet.
func (o *observer) scaleSet(ms *unstructured.Unstructured, deleted bool) {
	k := obj(ms)
	if deleted {
		delete(o.desired, k)
		return
	}
	want := integer(ms, -1, "spec", "replicas")
	last, known := o.desired[k]
	o.desired[k] = want
	if known && last != want {
		o.m.rec.add(evScale, "MachineSet", k, strconv.FormatInt(last, 10), strconv.FormatInt(want, 10), "")
	}
}

// scale records a new total of the MachineSets' replicas once it equals the
// MachineDeployment's spec.replicas (a rollout's surge is transient and
// returns to the same total, so it records nothing).
func (o *observer) scale(ns, md string) {
	d := o.m.get(gvrMD, ns, md)
	if d == nil {
		return
	}
	want := integer(d, -1, "spec", "replicas")
	var total int64
	for _, ms := range o.m.list(gvrMS, ns) {
		if ms.GetLabels()[mdNameLabel] == md && ms.GetDeletionTimestamp() == nil {
			total += integer(ms, 0, "spec", "replicas")
		}
	}
	k := ns + "/" + md
	last, known := o.desired[k]
	if total != want || (known && last == total) {
		return
	}
	o.desired[k] = total
	if known {
		o.m.rec.add(evScale, "MachineDeployment", k, strconv.FormatInt(last, 10), strconv.FormatInt(total, 10), "")
	}
}

// ---- HyperShift's in-place upgrader over the real Machines ---------------------

// node is what the in-place upgrader reads and writes on a machine's Node in
// the hosted cluster (the machine-config daemon's current and desired config
// and its state, annotations upstream): "" (done) or Updating until readyAt,
// or Degraded; config, the config version the machine runs. No hosted
// cluster's Nodes are served here, so the model keeps them in memory.
type node struct {
	state   string
	config  string
	readyAt time.Time
}

// reconcileInPlaceReal runs the in-place upgrader (upgradeInPlace) for an
// InPlace pool's MachineSet over its real Machines: a Machine takes part once
// Cluster API reports it Running (status.phase), and boots the config its
// MachineSet targets when the upgrader first sees it, as a new machine boots
// the current user data.
func (m *model) reconcileInPlaceReal(ctx context.Context, ns, name string) (time.Duration, error) {
	ms := m.get(gvrMS, ns, name)
	if ms == nil || ms.GetDeletionTimestamp() != nil || ms.GetLabels()[mdNameLabel] != "" {
		return 0, nil
	}
	boot := firstNonEmpty(ms.GetAnnotations()[targetConfigAnn], ms.GetAnnotations()[currentConfigAnn])
	var all []*machine
	m.mu.Lock()
	for _, u := range m.list(gvrMachine, ns) {
		if u.GetLabels()[msNameLabel] != name || u.GetDeletionTimestamp() != nil {
			continue
		}
		k := ns + "/" + u.GetName()
		n := m.nodes[k]
		if n == nil {
			n = &node{config: boot}
			m.nodes[k] = n
		}
		mc := &machine{u: u, name: u.GetName(), set: name, state: firstNonEmpty(n.state, str(u, "status", "phase")),
			config: n.config, readyAt: n.readyAt, created: u.GetCreationTimestamp().Time}
		all = append(all, mc)
	}
	m.mu.Unlock()
	oldestFirst(all)
	return m.upgradeInPlace(ctx, ms, all, func(mc *machine, data map[string]interface{}) error {
		m.mu.Lock()
		defer m.mu.Unlock()
		n := m.nodes[ns+"/"+mc.name]
		if n == nil {
			return nil // deleted meanwhile
		}
		if s, ok := data["state"].(string); ok {
			n.state = s
			if s == "Running" {
				n.state = "" // the machine's own phase again
			}
		}
		if c, ok := data["config"].(string); ok {
			n.config = c
		}
		if v, ok := data["readyAt"]; ok {
			n.readyAt = time.Time{}
			if s, ok := v.(string); ok {
				n.readyAt, _ = time.Parse(timeFmt, s)
			}
		}
		return nil
	})
}
