package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sort"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Machines are ConfigMaps labelled e2e-model.hcp-controller/role=machine in
// the control-plane namespace, with the Cluster API labels of a Machine
// (cluster.x-k8s.io/set-name, cluster.x-k8s.io/deployment-name). Their data:
//   state        Provisioning | Running | Updating
//   readyAt      simulated instant a Provisioning/Updating machine is done
//   version      spec.template.spec.version it was made from
//   userData     the bootstrap data secret it was made from
//   config       its config version (InPlace pools)
//   replaces     the old machine it replaces (a rollout's surge machine)
// A test deletes one to play remediation.

const timeFmt = time.RFC3339Nano

type machine struct {
	u        *unstructured.Unstructured
	name     string
	set      string
	state    string
	readyAt  time.Time
	replaces string
	config   string
	created  time.Time
}

func (m *model) machines(ns, label, value string) []*machine {
	var out []*machine
	for _, u := range m.list(gvrCM, ns) {
		l := u.GetLabels()
		if l[roleLabel] != roleMachine || l[label] != value || u.GetDeletionTimestamp() != nil {
			continue
		}
		mc := &machine{u: u, name: u.GetName(), set: l[msNameLabel], state: str(u, "data", "state"),
			replaces: str(u, "data", "replaces"), config: str(u, "data", "config"),
			created: u.GetCreationTimestamp().Time}
		mc.readyAt, _ = time.Parse(timeFmt, str(u, "data", "readyAt"))
		out = append(out, mc)
	}
	oldestFirst(out)
	return out
}

// oldestFirst sorts machines oldest first (name breaks ties: creation times
// have second precision).
func oldestFirst(out []*machine) {
	sort.Slice(out, func(i, j int) bool {
		if !out[i].created.Equal(out[j].created) {
			return out[i].created.Before(out[j].created)
		}
		return out[i].name < out[j].name
	})
}

func randSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:5]
}

// newMachine creates a machine of a MachineSet; it is Running at once when
// d is 0, else Provisioning until now+d (simulated).
func (m *model) newMachine(ctx context.Context, ms *unstructured.Unstructured, d time.Duration, data map[string]interface{}) (string, error) {
	name := ms.GetName() + "-" + randSuffix()
	labels := map[string]interface{}{roleLabel: roleMachine, msNameLabel: ms.GetName(),
		clusterNameLabel: str(ms, "spec", "clusterName")}
	if md := ms.GetLabels()[mdNameLabel]; md != "" {
		labels[mdNameLabel] = md
	}
	if data == nil {
		data = map[string]interface{}{}
	}
	data["version"] = str(ms, "spec", "template", "spec", "version")
	data["userData"] = str(ms, "spec", "template", "spec", "bootstrap", "dataSecretName")
	// A machine whose ignition cannot be fetched never becomes a node
	// (tokens.go, bootstrapProblem).
	if why := m.bootstrapProblem(ms.GetNamespace(), data["userData"].(string)); why != "" {
		data["state"] = "BootstrapFailed"
		data["bootstrapError"] = why
		owner := ms.GetLabels()[mdNameLabel]
		if owner == "" {
			owner = ms.GetName()
		}
		m.rec.add(evBootstrapFailed, "Machine", ms.GetNamespace()+"/"+owner, "", name, why)
	} else if d > 0 {
		data["state"] = "Provisioning"
		data["readyAt"] = m.clk.now().Add(d).UTC().Format(timeFmt)
	} else {
		data["state"] = "Running"
	}
	u := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]interface{}{
			"name": name, "namespace": ms.GetNamespace(), "labels": labels,
			"annotations": map[string]interface{}{
				"e2e-model.hcp-controller/stands-for": "cluster.x-k8s.io/v1beta2 Machine"},
		},
		"data": data,
	}}
	return name, m.create(ctx, gvrCM, u)
}

// progressMachines moves Provisioning machines whose time has come to
// Running, and returns the real delay until the next one is due (0: none).
// The Machine controller and the infrastructure provider do this; they stop
// with the Cluster (Cluster.spec.paused), not with a MachineDeployment's
// pause annotation.
func (m *model) progressMachines(ctx context.Context, ms []*machine) (time.Duration, error) {
	now := m.clk.now()
	var next time.Duration
	for _, mc := range ms {
		if mc.state != "Provisioning" {
			continue
		}
		if !now.Before(mc.readyAt) {
			if err := m.patch(ctx, gvrCM, "Machine", mc.u.GetNamespace(), mc.name,
				map[string]interface{}{"data": map[string]interface{}{"state": "Running", "readyAt": nil}}); err != nil {
				return 0, err
			}
			mc.state = "Running"
			continue
		}
		if d := m.requeueFor(mc.readyAt.Sub(now)); next == 0 || d < next {
			next = d
		}
	}
	return next, nil
}

func minPositive(a, b time.Duration) time.Duration {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// clusterPaused says whether the CAPI Cluster of an object is paused
// (Cluster.spec.paused), which stops every Cluster API controller of that
// cluster. Upstream: util/paused/paused.go, EnsurePausedCondition:
// "cluster.Spec.Paused || annotations.HasPaused(obj)".
func (m *model) clusterPaused(ns, cluster string) bool {
	c := m.get(gvrCluster, ns, cluster)
	return c != nil && boolean(c, "spec", "paused")
}

func hasPausedAnn(u *unstructured.Unstructured) bool {
	_, ok := u.GetAnnotations()[pausedAnn]
	return ok
}

// reconcileMachineDeployment models Cluster API's MachineDeployment
// controller with its MachineSets and machines.
//
// Upstream (kubernetes-sigs/cluster-api main, v1.14):
// core/reconcilers/machinedeployment/machinedeployment_controller.go,
// Reconcile (returns at once when paused.EnsurePausedCondition reports the
// Cluster or the cluster.x-k8s.io/paused annotation) and reconcile ("if
// ptr.Deref(md.Spec.Paused, false) { return r.sync(...) }" before any
// rollout); machinedeployment_sync.go, sync (a paused deployment is only
// scaled: the rollout planner runs with createNewMSIfNotExist=false, so no
// MachineSet is created for a new template) and scale;
// machinedeployment_rollout_rollingupdate.go (a template change gets a new
// MachineSet, machines move to it within maxSurge/maxUnavailable).
func (m *model) reconcileMachineDeployment(ctx context.Context, ns, name string) (time.Duration, error) {
	md := m.get(gvrMD, ns, name)
	k := key("md", ns, name)
	if md == nil || md.GetDeletionTimestamp() != nil {
		m.forget(k)
		return 0, nil
	}
	cluster := str(md, "spec", "clusterName")
	if m.clusterPaused(ns, cluster) {
		return 0, nil
	}
	all := m.machines(ns, mdNameLabel, name)
	requeue, err := m.progressMachines(ctx, all)
	if err != nil {
		return 0, err
	}
	if hasPausedAnn(md) {
		return requeue, nil
	}

	desired := integer(md, 1, "spec", "replicas")
	specPaused := boolean(md, "spec", "paused")
	tmpl, _, _ := unstructured.NestedFieldNoCopy(md.Object, "spec", "template")
	hash := shortHash(tmpl)

	var sets []*unstructured.Unstructured
	var newMS *unstructured.Unstructured
	for _, ms := range m.list(gvrMS, ns) {
		if ms.GetLabels()[mdNameLabel] != name {
			continue
		}
		sets = append(sets, ms)
		if ms.GetLabels()[templateHashLbl] == hash {
			newMS = ms
		}
	}
	sort.Slice(sets, func(i, j int) bool {
		return sets[i].GetCreationTimestamp().Time.Before(sets[j].GetCreationTimestamp().Time)
	})

	if newMS == nil && !specPaused {
		msName := name + "-" + hash
		u := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
			"metadata": map[string]interface{}{
				"name": msName, "namespace": ns,
				"labels": map[string]interface{}{mdNameLabel: name, templateHashLbl: hash,
					clusterNameLabel: cluster},
				"ownerReferences": []interface{}{map[string]interface{}{
					"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
					"name": name, "uid": string(md.GetUID()), "controller": true}},
			},
			"spec": map[string]interface{}{
				"clusterName": cluster, "replicas": int64(0),
				"template": runtimeCopy(tmpl),
			},
		}}
		if m.opt.capiUpstream {
			msSelector(md, u, map[string]string{mdNameLabel: name, templateHashLbl: hash})
		}
		if err := m.create(ctx, gvrMS, u); err != nil {
			return 0, err
		}
		m.rec.add(evMSCreated, "MachineDeployment", obj(md), "", msName, "")
		newMS = m.get(gvrMS, ns, msName)
		if newMS == nil {
			return 0, nil // the cache will bring it; its event requeues
		}
		sets = append(sets, newMS)
	}
	// The set new machines go to: the new template's, or when paused
	// without one, the newest (mdutil.FindOneActiveOrLatest).
	target := newMS
	if target == nil && len(sets) > 0 {
		target = sets[len(sets)-1]
	}
	if target == nil {
		return requeue, nil // paused before it ever had a MachineSet
	}

	// Scale events, and the desired count as last acted on, to tell a
	// scale-up from the replacement of a deleted machine.
	last, known := m.swapDesired(k, desired)
	if known && last != desired {
		m.rec.add(evScale, "MachineDeployment", obj(md), strconv.FormatInt(last, 10), strconv.FormatInt(desired, 10), "")
	}

	// A replacement whose new machine is ready ends with the old one's
	// deletion (the old MachineSet scaled down by one).
	byName := map[string]*machine{}
	for _, mc := range all {
		byName[mc.name] = mc
	}
	var live []*machine
	surge := 0
	for _, mc := range all {
		if mc.replaces != "" {
			if mc.state == "Running" {
				if old := byName[mc.replaces]; old != nil {
					if err := m.remove(ctx, gvrCM, "Machine", ns, old.name); err != nil {
						return 0, err
					}
					old.state = "Deleted"
				}
				if err := m.patch(ctx, gvrCM, "Machine", ns, mc.name,
					map[string]interface{}{"data": map[string]interface{}{"replaces": nil}}); err != nil {
					return 0, err
				}
				m.rec.add(evReplaceDone, "MachineDeployment", obj(md), mc.replaces, mc.name, "")
				mc.replaces = ""
			} else {
				surge++
			}
		}
	}
	for _, mc := range all {
		if mc.state != "Deleted" {
			live = append(live, mc)
		}
	}
	base := len(live) - surge

	// Scale (sync / scale): machines to desired, not counting surge machines.
	for ; int64(base) < desired; base++ {
		ev := evMachineCreated
		if known && last == desired {
			ev = evRemediation
		}
		n, err := m.newMachine(ctx, target, m.opt.provision, nil)
		if err != nil {
			return 0, err
		}
		m.rec.add(ev, "MachineDeployment", obj(md), "", n, target.GetName())
		if m.opt.provision > 0 {
			requeue = minPositive(requeue, m.requeueFor(m.opt.provision))
		}
	}
	if int64(base) > desired {
		// Old machines go first, oldest first; then the newest set's.
		victims := make([]*machine, 0, len(live))
		for _, mc := range live {
			if mc.set != target.GetName() && !isReplaced(mc, live) {
				victims = append(victims, mc)
			}
		}
		for _, mc := range live {
			if mc.set == target.GetName() && mc.replaces == "" {
				victims = append(victims, mc)
			}
		}
		for i := 0; int64(base) > desired && i < len(victims); i++ {
			if err := m.remove(ctx, gvrCM, "Machine", ns, victims[i].name); err != nil {
				return 0, err
			}
			m.rec.add(evMachineDeleted, "MachineDeployment", obj(md), victims[i].name, "", victims[i].set)
			victims[i].state = "Deleted"
			base--
		}
	}

	// Rolling update, maxSurge 1 / maxUnavailable 0: one replacement at a
	// time, and none while spec.paused.
	if !specPaused && newMS != nil && surge == 0 {
		for _, mc := range live {
			if mc.state == "Deleted" || mc.set == newMS.GetName() {
				continue
			}
			n, err := m.newMachine(ctx, newMS, m.opt.replacement, map[string]interface{}{"replaces": mc.name})
			if err != nil {
				return 0, err
			}
			m.rec.add(evReplaceStart, "MachineDeployment", obj(md), mc.name, n, newMS.GetName())
			requeue = minPositive(requeue, m.requeueFor(m.opt.replacement))
			break
		}
	}

	return requeue, m.syncStatus(ctx, md, sets, newMS, name)
}

func isReplaced(mc *machine, live []*machine) bool {
	for _, o := range live {
		if o.replaces == mc.name {
			return true
		}
	}
	return false
}

func runtimeCopy(v interface{}) interface{} {
	if mm, ok := v.(map[string]interface{}); ok {
		return runtimeDeepCopy(mm)
	}
	return map[string]interface{}{}
}

func runtimeDeepCopy(mm map[string]interface{}) map[string]interface{} {
	u := &unstructured.Unstructured{Object: mm}
	return u.DeepCopy().Object
}

// syncStatus writes spec.replicas of each MachineSet (its machine count) and
// the MachineSet and MachineDeployment status counters, v1beta1 and v1beta2
// names both (the fixture CRDs share one schema), when they differ.
func (m *model) syncStatus(ctx context.Context, md *unstructured.Unstructured, sets []*unstructured.Unstructured, newMS *unstructured.Unstructured, name string) error {
	ns := md.GetNamespace()
	all := m.machines(ns, mdNameLabel, name)
	var total, ready, upToDate int64
	for _, ms := range sets {
		var n, r int64
		for _, mc := range all {
			if mc.set == ms.GetName() {
				n++
				if mc.state == "Running" {
					r++
				}
			}
		}
		total += n
		ready += r
		if newMS != nil && ms.GetName() == newMS.GetName() {
			upToDate = n
		}
		if integer(ms, -1, "spec", "replicas") != n {
			if err := m.patch(ctx, gvrMS, "MachineSet", ns, ms.GetName(),
				map[string]interface{}{"spec": map[string]interface{}{"replicas": n}}); err != nil {
				return err
			}
		}
		if m.opt.capiStatus && (integer(ms, -1, "status", "replicas") != n || integer(ms, -1, "status", "readyReplicas") != r) {
			if err := m.patch(ctx, gvrMS, "MachineSet", ns, ms.GetName(), map[string]interface{}{"status": map[string]interface{}{
				"replicas": n, "readyReplicas": r, "availableReplicas": r}}, "status"); err != nil {
				return err
			}
		}
	}
	if !m.opt.capiStatus {
		return nil
	}
	if integer(md, -1, "status", "replicas") == total && integer(md, -1, "status", "readyReplicas") == ready &&
		integer(md, -1, "status", "upToDateReplicas") == upToDate && m.updatedReplicas(md) == upToDate &&
		integer(md, -1, "status", "observedGeneration") == md.GetGeneration() {
		return nil
	}
	status := map[string]interface{}{
		"replicas": total, "readyReplicas": ready, "availableReplicas": ready,
		"upToDateReplicas": upToDate, "observedGeneration": md.GetGeneration()}
	v1beta1 := map[string]interface{}{"updatedReplicas": upToDate, "unavailableReplicas": total - ready}
	if m.opt.capiUpstream {
		// Upstream: MachineDeploymentV1Beta1DeprecatedStatus, which the
		// conversion serves to v1beta1 readers as status.updatedReplicas.
		v1beta1["readyReplicas"], v1beta1["availableReplicas"] = ready, ready
		status["deprecated"] = map[string]interface{}{"v1beta1": v1beta1}
	} else {
		for k, v := range v1beta1 {
			status[k] = v
		}
	}
	return m.patch(ctx, gvrMD, "MachineDeployment", ns, name, map[string]interface{}{"status": status}, "status")
}

// updatedReplicas is v1beta1's status.updatedReplicas of a MachineDeployment
// read as v1beta2 (where Cluster API's own CRD keeps it under
// status.deprecated.v1beta1), -2 when absent.
func (m *model) updatedReplicas(md *unstructured.Unstructured) int64 {
	if m.opt.capiUpstream {
		return integer(md, -2, "status", "deprecated", "v1beta1", "updatedReplicas")
	}
	return integer(md, -2, "status", "updatedReplicas")
}

// reconcileMachineSet models a MachineSet without a MachineDeployment (an
// InPlace NodePool's): Cluster API's MachineSet controller scales it unless
// paused, and HyperShift's in-place upgrader (upgradeInPlace) updates its
// machines whatever the pause says.
//
// Upstream: cluster-api core/reconcilers/machineset/machineset_controller.go
// (Reconcile returns when paused.EnsurePausedCondition reports a pause).
func (m *model) reconcileMachineSet(ctx context.Context, ns, name string) (time.Duration, error) {
	ms := m.get(gvrMS, ns, name)
	k := key("ms", ns, name)
	if ms == nil || ms.GetDeletionTimestamp() != nil || ms.GetLabels()[mdNameLabel] != "" {
		m.forget(k)
		return 0, nil
	}
	cpaused := m.clusterPaused(ns, str(ms, "spec", "clusterName"))
	all := m.machines(ns, msNameLabel, name)
	var requeue time.Duration
	if !cpaused {
		var err error
		if requeue, err = m.progressMachines(ctx, all); err != nil {
			return 0, err
		}
	}

	// The in-place upgrader: the machines' state is their ConfigMaps'.
	target := ms.GetAnnotations()[targetConfigAnn]
	current := ms.GetAnnotations()[currentConfigAnn]
	ur, err := m.upgradeInPlace(ctx, ms, all, func(mc *machine, data map[string]interface{}) error {
		return m.patch(ctx, gvrCM, "Machine", ns, mc.name, map[string]interface{}{"data": data})
	})
	if err != nil {
		return 0, err
	}
	requeue = minPositive(requeue, ur)

	// The MachineSet controller: scaling, stopped by either pause.
	if cpaused || hasPausedAnn(ms) {
		return requeue, nil
	}
	desired := integer(ms, 1, "spec", "replicas")
	last, known := m.swapDesired(k, desired)
	if known && last != desired {
		m.rec.add(evScale, "MachineSet", obj(ms), strconv.FormatInt(last, 10), strconv.FormatInt(desired, 10), "")
	}
	n := int64(len(all))
	for ; n < desired; n++ {
		ev := evMachineCreated
		if known && last == desired {
			ev = evRemediation
		}
		// A new machine boots the current user data: it is at the
		// MachineSet's target config.
		mn, err := m.newMachine(ctx, ms, m.opt.provision, map[string]interface{}{"config": firstNonEmpty(target, current)})
		if err != nil {
			return 0, err
		}
		m.rec.add(ev, "MachineSet", obj(ms), "", mn, "")
	}
	for i := len(all) - 1; n > desired && i >= 0; i-- {
		if err := m.remove(ctx, gvrCM, "Machine", ns, all[i].name); err != nil {
			return 0, err
		}
		m.rec.add(evMachineDeleted, "MachineSet", obj(ms), all[i].name, "", "")
		n--
	}
	if m.opt.capiStatus {
		all = m.machines(ns, msNameLabel, name)
		var r int64
		for _, mc := range all {
			if mc.state == "Running" {
				r++
			}
		}
		// A stand-alone MachineSet's machines get no UpToDate condition
		// (core/reconcilers/machine/machine_controller_status.go,
		// setUpToDateCondition), so its status.upToDateReplicas, which
		// counts them (machineset_controller_status.go, setReplicas), is 0
		// however many machines run.
		if integer(ms, -1, "status", "replicas") != int64(len(all)) || integer(ms, -1, "status", "readyReplicas") != r ||
			integer(ms, -1, "status", "upToDateReplicas") != 0 {
			if err := m.patch(ctx, gvrMS, "MachineSet", ns, name, map[string]interface{}{"status": map[string]interface{}{
				"replicas": int64(len(all)), "readyReplicas": r, "availableReplicas": r, "upToDateReplicas": 0}}, "status"); err != nil {
				return 0, err
			}
		}
	}
	return requeue, nil
}

// upgradeInPlace plays HyperShift's in-place upgrader over the machines of
// an InPlace pool's MachineSet (oldest first) and returns when it wants
// another turn (real time, 0: on the next event). A machine's state
// ("Running", "Updating" until readyAt, "Degraded") and config version
// are its Node's (the machine-config daemon's annotations upstream); put
// stores a machine's new state (keys state, readyAt, config, version).
//
// Upstream: hypershift control-plane-operator/hostedclusterconfigoperator/
// controllers/inplaceupgrader/inplaceupgrader.go (Reconcile acts when the
// MachineSet's nodePoolTargetConfigVersion differs from
// nodePoolCurrentConfigVersion, updating at most nodePoolMaxUnavailable
// machines at a time, default 1, and sets the current version once every
// machine is at the target; it reads no pause).
func (m *model) upgradeInPlace(ctx context.Context, ms *unstructured.Unstructured, all []*machine,
	put func(mc *machine, data map[string]interface{}) error) (time.Duration, error) {
	ns, name := ms.GetNamespace(), ms.GetName()
	target := ms.GetAnnotations()[targetConfigAnn]
	current := ms.GetAnnotations()[currentConfigAnn]
	var requeue time.Duration
	if target != "" && target != current {
		now := m.clk.now()
		updating, done := 0, 0
		for _, mc := range all {
			switch {
			case mc.state == "Updating" && !now.Before(mc.readyAt):
				if err := put(mc, map[string]interface{}{"state": "Running", "readyAt": nil, "config": target,
					"version": str(ms, "spec", "template", "spec", "version")}); err != nil {
					return 0, err
				}
				m.rec.add(evInPlaceDone, "MachineSet", obj(ms), mc.config, target, mc.name)
				mc.state, mc.config = "Running", target
				done++
			case mc.state == "Updating":
				updating++
				requeue = minPositive(requeue, m.requeueFor(mc.readyAt.Sub(now)))
			case mc.config == target:
				done++
			}
		}
		maxUnavailable := 1
		if v, err := strconv.Atoi(ms.GetAnnotations()["hypershift.openshift.io/nodePoolMaxUnavailable"]); err == nil && v > 0 {
			maxUnavailable = v
		}
		// inplaceupgrader.go: a degraded node stops the update ("Cannot
		// continue"): no other machine starts.
		degraded := ms.GetAnnotations()[upgradeInProgressFalseAnn] != ""
		for _, mc := range all {
			degraded = degraded || mc.state == "Degraded"
		}
		for _, mc := range all {
			if updating >= maxUnavailable || degraded {
				break
			}
			if mc.state != "Running" || mc.config == target {
				continue
			}
			if m.opt.failInPlace[ms.GetAnnotations()[nodePoolAnn]] {
				// --fail-inplace: the node's machine-config daemon reports
				// Degraded; the upgrader stops and says so on the MachineSet
				// (inplaceupgrader.go: a degraded node sets the
				// nodePoolUpgradeInProgressFalse annotation with the node's
				// name and the daemon's reason, and the update goes no further).
				why := "Node " + mc.name + " in nodepool degraded: machine config daemon failed to apply " + target
				if err := put(mc, map[string]interface{}{"state": "Degraded"}); err != nil {
					return 0, err
				}
				if err := m.patch(ctx, gvrMS, "MachineSet", ns, name, map[string]interface{}{"metadata": map[string]interface{}{
					"annotations": map[string]interface{}{upgradeInProgressFalseAnn: why, upgradeInProgressTrueAnn: nil}}}); err != nil {
					return 0, err
				}
				m.rec.add(evInPlaceFailed, "MachineSet", obj(ms), mc.config, target, mc.name)
				mc.state, degraded = "Degraded", true
				continue
			}
			if err := put(mc, map[string]interface{}{"state": "Updating",
				"readyAt": now.Add(m.opt.replacement).UTC().Format(timeFmt)}); err != nil {
				return 0, err
			}
			m.rec.add(evInPlaceStart, "MachineSet", obj(ms), mc.config, target, mc.name)
			mc.state = "Updating"
			updating++
			requeue = minPositive(requeue, m.requeueFor(m.opt.replacement))
		}
		if updating == 0 && done == len(all) {
			if err := m.patch(ctx, gvrMS, "MachineSet", ns, name, annPatch(currentConfigAnn, target)); err != nil {
				return 0, err
			}
		}
	}

	return requeue, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// msSelector gives a new MachineSet of a MachineDeployment the selector and
// template labels Cluster API's own CRD and webhook require (the selector
// must match the template's labels): the MachineDeployment's selector plus
// extra, and extra among the template's labels.
//
// Upstream: machinedeployment_rollout_planner.go / mdutil, the new
// MachineSet's selector and template labels carry the MachineDeployment's
// plus machine-template-hash (and cluster.x-k8s.io/deployment-name).
func msSelector(md, ms *unstructured.Unstructured, extra map[string]string) {
	sel := map[string]interface{}{}
	if ml, ok, _ := unstructured.NestedMap(md.Object, "spec", "selector", "matchLabels"); ok {
		for k, v := range ml {
			sel[k] = v
		}
	}
	labels, _, _ := unstructured.NestedMap(ms.Object, "spec", "template", "metadata", "labels")
	if labels == nil {
		labels = map[string]interface{}{}
	}
	for k, v := range extra {
		sel[k], labels[k] = v, v
	}
	_ = unstructured.SetNestedMap(ms.Object, sel, "spec", "selector", "matchLabels")
	_ = unstructured.SetNestedMap(ms.Object, labels, "spec", "template", "metadata", "labels")
}
