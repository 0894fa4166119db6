package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

var (
	gvrHC      = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedclusters"}
	gvrNP      = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "nodepools"}
	gvrCluster = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "clusters"}
	gvrMD      = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinedeployments"}
	gvrMS      = schema.GroupVersionResource{Group: "cluster.x-k8s.io", Version: "v1beta2", Resource: "machinesets"}
	gvrCM      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// Names shared with HyperShift and Cluster API.
const (
	pausedAnn        = "cluster.x-k8s.io/paused"
	nodePoolAnn      = "hypershift.openshift.io/nodePool"
	targetConfigAnn  = "hypershift.openshift.io/nodePoolTargetConfigVersion"
	currentConfigAnn = "hypershift.openshift.io/nodePoolCurrentConfigVersion"
	clusterNameLabel = "cluster.x-k8s.io/cluster-name"
	mdNameLabel      = "cluster.x-k8s.io/deployment-name"
	msNameLabel      = "cluster.x-k8s.io/set-name"
	templateHashLbl  = "machine-template-hash"
)

// The in-place upgrader's verdict on a MachineSet (nodepool_controller.go
// constants; set by inplaceupgrader.go, read by inplace.go).
const (
	upgradeInProgressTrueAnn  = "hypershift.openshift.io/nodePoolUpgradeInProgressTrue"
	upgradeInProgressFalseAnn = "hypershift.openshift.io/nodePoolUpgradeInProgressFalse"
)

// The model's own stand-ins are ConfigMaps carrying this label; its value
// says which ("hostedcontrolplane" or "machine").
const (
	roleLabel   = "e2e-model.hcp-controller/role"
	roleHCP     = "hostedcontrolplane"
	roleMachine = "machine"
)

type options struct {
	namespace   string        // HostedCluster/NodePool namespace to model; "" for all
	replacement time.Duration // simulated duration of one replacement / in-place update
	provision   time.Duration // simulated duration of a scale-up machine
	capiStatus  bool          // write CAPI status counters
	hcStatus    bool          // write HostedCluster status.version
	cpUpdate    time.Duration // simulated duration of a control-plane update
	conditions  bool          // write HyperShift's ReconciliationActive condition
	tokenTTL    time.Duration // simulated life of an outdated ignition token (2 h upstream)

	realCAPI       bool          // Cluster API's own controllers run; the model's Cluster API half is off (realcapi.go)
	capiUpstream   bool          // the server has Cluster API's own CRDs (v1beta2 stored, conversion webhook): status in v1beta2's layout only
	machineStartup time.Duration // real time an in-memory machine's VM and node each take to start (realCAPI)

	workers int // reconciles run at once (1: one at a time)

	npUpdatingVersion bool            // write the NodePool's UpdatingVersion condition
	failInPlace       map[string]bool // NodePools ("ns/name") whose in-place update fails
}

// model holds the informers of every kind HyperShift and Cluster API watch
// and one work queue. By default a single worker reconciles, so that no two
// reconciles of the model race each other; --workers runs more, as the
// controllers it stands for do (controller-runtime runs MaxConcurrentReconciles
// workers per controller; Cluster API's main.go --machinedeployment-concurrency
// and --machineset-concurrency default to 10), so that at a fast simulated
// clock a boundary's burst of reconciles does not queue the rest for
// simulated hours. The work queue never hands one key to two workers at once
// (client-go workqueue: an item being processed is re-queued only after
// Done), as upstream; the in-memory maps below are shared and taken under mu.
type model struct {
	dyn   dynamic.Interface
	clk   *clock
	rec   *recorder
	opt   options
	queue workqueue.TypedRateLimitingInterface[string]
	ready atomic.Bool

	inf map[schema.GroupVersionResource]cache.SharedIndexInformer

	// In-memory state of the model, kept between reconciles (under mu).
	mu          sync.Mutex
	pausedSince map[string]bool  // key -> reconcile currently paused by pausedUntil
	lastDesired map[string]int64 // MD/MS key -> replicas last acted on
	cpDone      map[string]bool  // control-plane namespace -> control plane provided (realCAPI)
	nodes       map[string]*node // "ns/machine" -> its Node's in-place state (realCAPI)
}

func newModel(dyn dynamic.Interface, clk *clock, rec *recorder, opt options) *model {
	return &model{
		dyn: dyn, clk: clk, rec: rec, opt: opt,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedMaxOfRateLimiter(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 5*time.Second))),
		inf:         map[schema.GroupVersionResource]cache.SharedIndexInformer{},
		pausedSince: map[string]bool{},
		lastDesired: map[string]int64{},
		cpDone:      map[string]bool{},
		nodes:       map[string]*node{},
	}
}

// forget drops what the model kept about a key whose object is gone.
func (m *model) forget(k string) {
	m.mu.Lock()
	delete(m.pausedSince, k)
	delete(m.lastDesired, k)
	m.mu.Unlock()
}

// swapDesired records the replicas a MachineDeployment/MachineSet key acts
// on and returns the ones it last acted on (known: it had acted before).
func (m *model) swapDesired(k string, desired int64) (last int64, known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	last, known = m.lastDesired[k]
	m.lastDesired[k] = desired
	return last, known
}

// Queue keys: "<kind>/<namespace>/<name>", kind one of hc, np, md, ms, ip
// (an InPlace MachineSet's upgrader beside real Cluster API).
func key(kind, ns, name string) string { return kind + "/" + ns + "/" + name }

func splitKey(k string) (kind, ns, name string) {
	p := strings.SplitN(k, "/", 3)
	if len(p) != 3 {
		return "", "", ""
	}
	return p[0], p[1], p[2]
}

// inScope says whether an object of namespace ns is modelled: a HostedCluster
// or NodePool namespace equal to --namespace, or a control-plane namespace
// "<namespace>-<cluster>".
func (m *model) inScope(ns string, controlPlane bool) bool {
	if m.opt.namespace == "" {
		return true
	}
	if controlPlane {
		return strings.HasPrefix(ns, m.opt.namespace+"-")
	}
	return ns == m.opt.namespace
}

func (m *model) start(ctx context.Context) error {
	all := dynamicinformer.NewDynamicSharedInformerFactory(m.dyn, 0)
	own := dynamicinformer.NewFilteredDynamicSharedInformerFactory(m.dyn, 0, metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.LabelSelector = roleLabel })
	for _, g := range []schema.GroupVersionResource{gvrHC, gvrNP, gvrCluster, gvrMD, gvrMS} {
		m.inf[g] = all.ForResource(g).Informer()
	}
	m.inf[gvrCM] = own.ForResource(gvrCM).Informer()
	if m.opt.realCAPI {
		// The record comes from the real Machines (realcapi.go).
		m.inf[gvrMachine] = all.ForResource(gvrMachine).Informer()
		obs := newObserver(m)
		for _, g := range []schema.GroupVersionResource{gvrMachine, gvrMS, gvrMD} {
			if _, err := m.inf[g].AddEventHandler(obs.handlers(g)); err != nil {
				return err
			}
		}
	}
	for g, inf := range m.inf {
		g := g
		_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(o interface{}) { m.onEvent(g, o, false) },
			UpdateFunc: func(old, o interface{}) {
				if u, ok := o.(*unstructured.Unstructured); ok {
					if ou, ok := old.(*unstructured.Unstructured); ok && ou.GetResourceVersion() != u.GetResourceVersion() {
						m.rec.saw(u.GetKind(), u.GetNamespace()+"/"+u.GetName())
					}
				}
				m.onEvent(g, o, false)
			},
			DeleteFunc: func(o interface{}) { m.onEvent(g, o, true) },
		})
		if err != nil {
			return err
		}
	}
	all.Start(ctx.Done())
	own.Start(ctx.Done())
	for g, inf := range m.inf {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return fmt.Errorf("informer of %s did not sync", g.Resource)
		}
	}
	m.ready.Store(true)
	return nil
}

// onEvent maps an event to the reconciles it triggers, as the watches of
// HyperShift's controllers and Cluster API's do; it decides nothing.
//
// Upstream: hypershift-operator/controllers/nodepool/nodepool_controller.go
// (SetupWithManager: NodePool, HostedCluster, MachineDeployment, MachineSet
// ... all enqueue the parent NodePool); hostedcluster_controller.go watches
// the HostedCluster, its NodePools and what it owns in the control-plane
// namespace (managedResources: HostedControlPlane, ConfigMaps, NodePools;
// support/k8sutil/resources.go BaseResources: the CAPI Cluster). Cluster
// API's MachineDeployment controller watches its MachineSets and Cluster
// pause transitions; the MachineSet controller its Machines.
func (m *model) onEvent(g schema.GroupVersionResource, o interface{}, deleted bool) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return
	}
	ns, name := u.GetNamespace(), u.GetName()
	switch g {
	case gvrHC:
		if !m.inScope(ns, false) {
			return
		}
		m.queue.Add(key("hc", ns, name))
		// enqueueNodePoolsForHostedCluster
		for _, np := range m.list(gvrNP, ns) {
			if str(np, "spec", "clusterName") == name {
				m.queue.Add(key("np", ns, np.GetName()))
			}
		}
	case gvrNP:
		if m.inScope(ns, false) {
			m.queue.Add(key("np", ns, name))
			if c := str(u, "spec", "clusterName"); c != "" {
				m.queue.Add(key("hc", ns, c))
			}
		}
	case gvrCluster:
		if !m.inScope(ns, true) {
			return
		}
		for _, hc := range m.list(gvrHC, "") {
			if hc.GetNamespace()+"-"+hc.GetName() == ns {
				m.queue.Add(key("hc", hc.GetNamespace(), hc.GetName()))
			}
		}
		if !m.opt.realCAPI {
			m.enqueueCAPI(ns)
		}
	case gvrMD, gvrMS:
		if !m.inScope(ns, true) {
			return
		}
		if p := u.GetAnnotations()[nodePoolAnn]; p != "" && !deleted {
			if i := strings.Index(p, "/"); i > 0 {
				m.queue.Add(key("np", p[:i], p[i+1:]))
			}
		}
		if m.opt.realCAPI {
			// Cluster API's own controllers reconcile them; an InPlace
			// pool's MachineSet also has HyperShift's in-place upgrader.
			if g == gvrMS && u.GetLabels()[mdNameLabel] == "" {
				m.queue.Add(key("ip", ns, name))
			}
			return
		}
		if g == gvrMD {
			m.queue.Add(key("md", ns, name))
		} else if md := u.GetLabels()[mdNameLabel]; md != "" {
			m.queue.Add(key("md", ns, md))
		} else {
			m.queue.Add(key("ms", ns, name))
		}
	case gvrMachine: // realCAPI: its MachineSet's in-place upgrader watches it
		if !m.inScope(ns, true) {
			return
		}
		if deleted {
			m.mu.Lock()
			delete(m.nodes, ns+"/"+name)
			m.mu.Unlock()
		}
		if l := u.GetLabels(); l[mdNameLabel] == "" && l[msNameLabel] != "" {
			m.queue.Add(key("ip", ns, l[msNameLabel]))
		}
	case gvrCM:
		if !m.inScope(ns, true) {
			return
		}
		l := u.GetLabels()
		switch l[roleLabel] {
		case roleMachine:
			if md := l[mdNameLabel]; md != "" {
				m.queue.Add(key("md", ns, md))
			} else if ms := l[msNameLabel]; ms != "" {
				m.queue.Add(key("ms", ns, ms))
			}
		case roleHCP:
			for _, hc := range m.list(gvrHC, "") {
				if hc.GetNamespace()+"-"+hc.GetName() == ns {
					m.queue.Add(key("hc", hc.GetNamespace(), hc.GetName()))
				}
			}
		}
	}
}

// enqueueCAPI queues every MachineDeployment and stand-alone MachineSet of a
// control-plane namespace (a Cluster pause transition concerns them all).
func (m *model) enqueueCAPI(ns string) {
	for _, md := range m.list(gvrMD, ns) {
		m.queue.Add(key("md", ns, md.GetName()))
	}
	for _, ms := range m.list(gvrMS, ns) {
		if ms.GetLabels()[mdNameLabel] == "" {
			m.queue.Add(key("ms", ns, ms.GetName()))
		}
	}
}

// run works the queue with opt.workers workers until ctx ends, then shuts
// it down.
func (m *model) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		m.queue.ShutDown()
	}()
	var wg sync.WaitGroup
	for i := 0; i < m.opt.workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.work(ctx)
		}()
	}
	wg.Wait()
}

// work takes keys from the queue and reconciles them until it shuts down.
func (m *model) work(ctx context.Context) {
	for {
		k, quit := m.queue.Get()
		if quit {
			return
		}
		after, err := m.reconcile(ctx, k)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Printf("%s: %v", k, err)
			m.queue.AddRateLimited(k)
		case after > 0:
			m.queue.Forget(k)
			m.queue.AddAfter(k, after)
		default:
			m.queue.Forget(k)
		}
		m.queue.Done(k)
	}
}

// reconcile returns the real delay after which the key wants another turn
// (0: only on the next event).
func (m *model) reconcile(ctx context.Context, k string) (time.Duration, error) {
	kind, ns, name := splitKey(k)
	switch kind {
	case "hc":
		if hc := m.get(gvrHC, ns, name); m.opt.conditions && hc != nil && hc.GetDeletionTimestamp() == nil {
			// Upstream persists the status before anything else of the
			// reconcile; on a conflict it requeues at once.
			if conflict, err := m.hostedClusterStatusUpdate(ctx, hc); err != nil || conflict {
				return 50 * time.Millisecond, err
			}
		}
		return m.reconcileHostedCluster(ctx, ns, name)
	case "np":
		after, err := m.reconcileNodePool(ctx, ns, name)
		// The patch helper runs after the reconcile, also when it failed.
		if np := m.get(gvrNP, ns, name); m.opt.conditions && np != nil && np.GetDeletionTimestamp() == nil {
			if perr := m.nodePoolStatusPatch(ctx, np); err == nil {
				err = perr
			}
		}
		return after, err
	case "md":
		return m.reconcileMachineDeployment(ctx, ns, name)
	case "ms":
		return m.reconcileMachineSet(ctx, ns, name)
	case "ip":
		return m.reconcileInPlaceReal(ctx, ns, name)
	}
	return 0, nil
}

// ---- cache and writes -------------------------------------------------------

// get returns the cached object, or nil.
func (m *model) get(g schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	o, ok, err := m.inf[g].GetStore().GetByKey(ns + "/" + name)
	if err != nil || !ok {
		return nil
	}
	return o.(*unstructured.Unstructured).DeepCopy()
}

// list returns the cached objects of a namespace ("" for all), copies.
func (m *model) list(g schema.GroupVersionResource, ns string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range m.inf[g].GetStore().List() {
		u := o.(*unstructured.Unstructured)
		if ns == "" || u.GetNamespace() == ns {
			out = append(out, u.DeepCopy())
		}
	}
	return out
}

// patch merge-patches an object and counts the write; skips empty patches.
func (m *model) patch(ctx context.Context, g schema.GroupVersionResource, kind, ns, name string, p map[string]interface{}, sub ...string) error {
	if len(p) == 0 {
		return nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	out, err := m.dyn.Resource(g).Namespace(ns).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{}, sub...)
	if err != nil {
		return fmt.Errorf("patch %s %s/%s: %w", kind, ns, name, err)
	}
	m.rec.wrote(kind, ns+"/"+name)
	m.waitVersion(g, ns, name, out.GetResourceVersion())
	return nil
}

// waitVersion waits (at most 2 s) until the informer holds the object at
// resourceVersion rv or later, so that the next reconcile does not act on
// what it has just changed (a machine started twice). resourceVersions are
// opaque to clients; this test model relies on etcd's being increasing
// integers, as they are on the test API server.
func (m *model) waitVersion(g schema.GroupVersionResource, ns, name, rv string) {
	want, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	for i := 0; i < 100; i++ {
		u := m.get(g, ns, name)
		if u == nil {
			return
		}
		if have, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64); err != nil || have >= want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// create creates an object, counts the write and waits until the informer
// has it, so that the next reconcile does not create it again.
func (m *model) create(ctx context.Context, g schema.GroupVersionResource, u *unstructured.Unstructured) error {
	kind := u.GetKind()
	if u.GetLabels()[roleLabel] == roleMachine {
		kind = "Machine"
	}
	_, err := m.dyn.Resource(g).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	m.rec.wrote(kind, u.GetNamespace()+"/"+u.GetName())
	m.waitCache(g, u.GetNamespace(), u.GetName(), true)
	return nil
}

// remove deletes an object, counts the write and waits until the informer
// has seen it go.
func (m *model) remove(ctx context.Context, g schema.GroupVersionResource, kind, ns, name string) error {
	err := m.dyn.Resource(g).Namespace(ns).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s %s/%s: %w", kind, ns, name, err)
	}
	m.rec.wrote(kind, ns+"/"+name)
	m.waitCache(g, ns, name, false)
	return nil
}

func (m *model) waitCache(g schema.GroupVersionResource, ns, name string, present bool) {
	for i := 0; i < 100; i++ {
		if (m.get(g, ns, name) != nil) == present {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitPatched waits (briefly) until the cache holds an object whose field
// has the value just written, for writes that later reconciles depend on.
func (m *model) waitPatched(g schema.GroupVersionResource, ns, name string, ok func(*unstructured.Unstructured) bool) {
	for i := 0; i < 100; i++ {
		if u := m.get(g, ns, name); u != nil && ok(u) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ---- field helpers ------------------------------------------------------------

func str(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}

func boolean(u *unstructured.Unstructured, path ...string) bool {
	b, _, _ := unstructured.NestedBool(u.Object, path...)
	return b
}

// integer reads an integer field; def when absent.
func integer(u *unstructured.Unstructured, def int64, path ...string) int64 {
	v, ok, err := unstructured.NestedFieldNoCopy(u.Object, path...)
	if err != nil || !ok {
		return def
	}
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return def
}

func obj(u *unstructured.Unstructured) string { return u.GetNamespace() + "/" + u.GetName() }

// capiUpstreamCRDs says whether the server has Cluster API's own
// MachineDeployment CRD, whose versions convert through Cluster API's
// webhook, rather than e2e's fixture (one schema for v1beta1 and v1beta2,
// no conversion). With the fixture the model writes the status counters of
// both versions, for readers of either; with Cluster API's own it writes
// v1beta2's alone, v1beta1's under status.deprecated.v1beta1 where Cluster
// API keeps them (a v1beta1 reader gets them through the conversion).
func capiUpstreamCRDs(dyn dynamic.Interface) (bool, error) {
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	crd, err := dyn.Resource(gvr).Get(ctx, "machinedeployments.cluster.x-k8s.io", metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("reading the MachineDeployment CRD: %w", err)
	}
	return str(crd, "spec", "conversion", "strategy") == "Webhook", nil
}
