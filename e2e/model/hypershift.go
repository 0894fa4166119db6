package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// pausedUntil decides spec.pausedUntil against the simulated clock: a
// boolean string pauses (true) or not (false) indefinitely; an RFC 3339
// instant pauses until then, and the second result is how long (simulated)
// is left; anything else does not pause.
//
// Upstream: support/util/pausereconcile.go (IsReconciliationPaused,
// ProcessPausedUntilField), which compares with time.Now().
func pausedUntil(v string, now time.Time) (bool, time.Duration) {
	if v == "" {
		return false, 0
	}
	if b, err := strconv.ParseBool(v); err == nil {
		return b, 0
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil || !now.Before(t) {
		return false, 0
	}
	return true, t.Sub(now)
}

// notePaused records the transitions of an object's reconcile between
// paused and active, once each.
func (m *model) notePaused(kind, k, object, until string, paused bool) {
	m.mu.Lock()
	same := m.pausedSince[k] == paused
	m.pausedSince[k] = paused
	m.mu.Unlock()
	if same {
		return
	}
	if paused {
		m.rec.add(evPaused, kind, object, "", until, "")
	} else {
		m.rec.add(evResumed, kind, object, "", "", "")
	}
}

// requeueFor converts the simulated time left of a pause into the real delay
// of the next reconcile (with a floor, so a rounding error cannot spin).
func (m *model) requeueFor(left time.Duration) time.Duration {
	d := m.clk.real(left) + 20*time.Millisecond
	if d < 50*time.Millisecond {
		d = 50 * time.Millisecond
	}
	return d
}

// reconcileHostedCluster models the part of the HostedCluster controller
// that decides what the control plane runs.
//
// Upstream: hypershift-operator/controllers/hostedcluster/
// hostedcluster_controller.go, (*HostedClusterReconciler).Reconcile.
func (m *model) reconcileHostedCluster(ctx context.Context, ns, name string) (time.Duration, error) {
	hc := m.get(gvrHC, ns, name)
	k := key("hc", ns, name)
	if hc == nil || hc.GetDeletionTimestamp() != nil {
		m.forget(k)
		return 0, nil
	}
	cpNS := ns + "-" + name
	infraID := str(hc, "spec", "infraID")

	// Reconcile: "if paused: ensure associated HostedControlPlane (if it
	// exists) is also paused and stop reconciliation" — pauseHostedControlPlane
	// copies pausedUntil into the HostedControlPlane, pauseCAPICluster sets
	// Cluster.spec.paused=true, and nothing else happens until the requeue.
	until := str(hc, "spec", "pausedUntil")
	if paused, left := pausedUntil(until, m.clk.now()); paused {
		m.notePaused("HostedCluster", k, obj(hc), until, true)
		if hcp := m.get(gvrCM, cpNS, name); hcp != nil && hcp.GetLabels()[roleLabel] == roleHCP &&
			str(hcp, "data", "pausedUntil") != until {
			if err := m.patch(ctx, gvrCM, "ConfigMap", cpNS, name,
				map[string]interface{}{"data": map[string]interface{}{"pausedUntil": until}}); err != nil {
				return 0, err
			}
		}
		if err := m.setClusterPaused(ctx, cpNS, infraID, true); err != nil {
			return 0, err
		}
		if left > 0 {
			return m.requeueFor(left), nil
		}
		return 0, nil
	}
	m.notePaused("HostedCluster", k, obj(hc), "", false)
	if m.opt.realCAPI {
		if err := m.realControlPlane(ctx, cpNS, infraID); err != nil {
			return 0, err
		}
	}

	// reconcileHostedControlPlane: hcp.Spec.ReleaseImage =
	// hcluster.Spec.Release.Image, ControlPlaneReleaseImage from
	// spec.controlPlaneRelease.image (nil when unset), PausedUntil copied.
	// Nothing on the way looks at the CAPI Cluster's pause. The new release
	// reaches the control-plane-operator, CAPI manager and CAPI provider
	// Deployments in the same reconcile (reconcileControlPlaneOperator,
	// reconcileCAPIManager, reconcileCAPIProvider), which is where the
	// control-plane update starts: the model records it as an initiation.
	release := str(hc, "spec", "release", "image")
	cpRelease := str(hc, "spec", "controlPlaneRelease", "image")
	running := cpRelease
	if running == "" {
		running = release
	}
	hcp := m.get(gvrCM, cpNS, name)
	if hcp == nil {
		cm := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]interface{}{
				"name": name, "namespace": cpNS,
				"labels": map[string]interface{}{roleLabel: roleHCP},
				"annotations": map[string]interface{}{
					"e2e-model.hcp-controller/stands-for": "hypershift.openshift.io/v1beta1 HostedControlPlane",
				},
			},
			"data": map[string]interface{}{
				"releaseImage": release, "controlPlaneReleaseImage": cpRelease,
				"runningImage": running, "pausedUntil": "",
			},
		}}
		if err := m.create(ctx, gvrCM, cm); err != nil {
			return 0, err
		}
		m.rec.add(evCPCreated, "HostedCluster", obj(hc), "", running, "")
	} else {
		d := map[string]interface{}{}
		if str(hcp, "data", "releaseImage") != release {
			d["releaseImage"] = release
		}
		if str(hcp, "data", "controlPlaneReleaseImage") != cpRelease {
			d["controlPlaneReleaseImage"] = cpRelease
		}
		if str(hcp, "data", "pausedUntil") != "" {
			d["pausedUntil"] = ""
		}
		prev := str(hcp, "data", "runningImage")
		if prev != running {
			d["runningImage"] = running
		}
		if len(d) > 0 {
			if err := m.patch(ctx, gvrCM, "ConfigMap", cpNS, name, map[string]interface{}{"data": d}); err != nil {
				return 0, err
			}
			m.waitPatched(gvrCM, cpNS, name, func(u *unstructured.Unstructured) bool {
				return str(u, "data", "runningImage") == running
			})
			if prev != running {
				m.rec.add(evCPInitiation, "HostedCluster", obj(hc), prev, running, "")
			}
		}
	}

	// reconcileCAPICluster (hostedcluster_controller.go): an unpaused
	// HostedCluster sets Cluster.spec.paused=false on every reconcile.
	if err := m.setClusterPaused(ctx, cpNS, infraID, false); err != nil {
		return 0, err
	}
	if !m.opt.hcStatus {
		return 0, nil
	}
	return m.hostedClusterVersionStatus(ctx, hc, running)
}

// hostedClusterVersionStatus writes status.version as HyperShift does for a
// control plane that takes --controlplane-update-duration to roll out: a new
// release gets desired.image and a Partial history entry at once; the entry
// is Completed when the duration has passed (simulated). Returns the real
// delay to the completion.
//
// Upstream: hostedcluster_controller.go, computeClusterVersionStatus (the
// legacy path without HostedControlPlane.status.versionStatus: "If a new
// rollout is needed, update the desired version and prepend a new partial
// history entry"; Completed once the HostedControlPlane runs the image).
func (m *model) hostedClusterVersionStatus(ctx context.Context, hc *unstructured.Unstructured, running string) (time.Duration, error) {
	now := m.clk.now()
	version, _, _ := unstructured.NestedMap(hc.Object, "status", "version")
	history, _, _ := unstructured.NestedSlice(hc.Object, "status", "version", "history")
	desired := str(hc, "status", "version", "desired", "image")
	var requeue time.Duration
	changed, completed := false, false
	if version == nil {
		version = map[string]interface{}{"availableUpdates": nil}
	}
	if desired != running {
		version["desired"] = map[string]interface{}{"image": running, "version": releaseVersion(running)}
		version["observedGeneration"] = hc.GetGeneration()
		history = append([]interface{}{map[string]interface{}{
			"state": "Partial", "image": running, "version": releaseVersion(running),
			"startedTime": now.UTC().Format(time.RFC3339), "completionTime": nil, "verified": false,
		}}, history...)
		changed = true
	}
	if len(history) > 0 {
		h0, _ := history[0].(map[string]interface{})
		if h0 != nil && h0["state"] == "Partial" && h0["image"] == running {
			started, err := time.Parse(time.RFC3339, fmt.Sprint(h0["startedTime"]))
			if err != nil {
				started = now
			}
			if done := started.Add(m.opt.cpUpdate); !now.Before(done) {
				// Upstream: computeClusterVersionStatus, "The rollout is
				// complete, so update the current history entry": State
				// Completed, Version from the HostedControlPlane,
				// CompletionTime; the entry keeps its image.
				h0["state"] = "Completed"
				h0["version"] = releaseVersion(running)
				h0["completionTime"] = now.UTC().Format(time.RFC3339)
				changed = true
				completed = true
			} else {
				requeue = m.requeueFor(done.Sub(now))
			}
		}
	}
	if !changed {
		return requeue, nil
	}
	version["history"] = history
	op := map[string]interface{}{"op": "add", "path": "/status/version", "value": version}
	if _, ok := hc.Object["status"]; !ok {
		op = map[string]interface{}{"op": "add", "path": "/status", "value": map[string]interface{}{"version": version}}
	}
	b, err := json.Marshal([]interface{}{op})
	if err != nil {
		return 0, err
	}
	out, err := m.dyn.Resource(gvrHC).Namespace(hc.GetNamespace()).Patch(ctx, hc.GetName(), types.JSONPatchType, b,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return 0, fmt.Errorf("status of HostedCluster %s: %w", obj(hc), err)
	}
	m.rec.wrote("HostedCluster", obj(hc))
	if completed {
		m.rec.add(evCPCompleted, "HostedCluster", obj(hc), "", running, "")
	}
	m.waitVersion(gvrHC, hc.GetNamespace(), hc.GetName(), out.GetResourceVersion())
	return requeue, nil
}

// setClusterPaused writes Cluster.spec.paused when it differs.
//
// Upstream: hostedcluster_controller.go, pauseCAPICluster (true while
// pausedUntil holds) and reconcileCAPICluster (false otherwise). The model
// does not create the Cluster; the tests and the e2e fixtures do.
func (m *model) setClusterPaused(ctx context.Context, ns, name string, paused bool) error {
	if name == "" {
		return nil
	}
	c := m.get(gvrCluster, ns, name)
	if c == nil || boolean(c, "spec", "paused") == paused {
		return nil
	}
	if err := m.patch(ctx, gvrCluster, "Cluster", ns, name,
		map[string]interface{}{"spec": map[string]interface{}{"paused": paused}}); err != nil {
		return err
	}
	m.waitPatched(gvrCluster, ns, name, func(u *unstructured.Unstructured) bool {
		return boolean(u, "spec", "paused") == paused
	})
	return nil
}

var releaseTag = regexp.MustCompile(`:([0-9]+\.[0-9]+\.[0-9]+[^@]*?)(-x86_64|-aarch64|-multi|-ppc64le|-s390x)?$`)

// releaseVersion derives the version HyperShift puts into
// MachineDeployment.spec.template.spec.version from a release image. The
// real operator reads it from the release payload (CAPI.Version() via the
// release image provider); the model takes the image tag
// ("...ocp-release:4.17.1-x86_64" -> "4.17.1"), or a digest of the whole
// image when there is no such tag.
func releaseVersion(image string) string {
	if mm := releaseTag.FindStringSubmatch(image); mm != nil {
		return mm[1]
	}
	return "image-" + shortHash(image)
}

func shortHash(parts ...interface{}) string {
	h := sha256.New()
	for _, p := range parts {
		b, _ := json.Marshal(p)
		h.Write(b)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:8]
}

// hostedClusterRolloutInputs are the HostedCluster fields that are part of
// every NodePool's target hash, so that a change of one rolls every pool of
// the cluster.
//
// Upstream: hypershift-operator/controllers/nodepool/config.go,
// rolloutConfig and ConfigGenerator.Hash(): the hash is taken over the
// pool's MCO config, the release version, spec.pullSecret.name,
// spec.additionalTrustBundle.name and globalConfig (globalConfigString():
// the proxy and image configuration of spec.configuration);
// getCoreConfigs: spec.imageContentSources adds a core ignition config to
// the MCO config. docs/content/reference/nodepool-rollouts.md lists the
// same fields as rolling all NodePools. The model hashes the fields as
// written (HyperShift also hashes the trust bundles' content; the fixtures
// change names).
func hostedClusterRolloutInputs(hc *unstructured.Unstructured) []interface{} {
	field := func(path ...string) interface{} {
		v, _, _ := unstructured.NestedFieldNoCopy(hc.Object, path...)
		return v
	}
	return []interface{}{
		str(hc, "spec", "pullSecret", "name"),
		str(hc, "spec", "additionalTrustBundle", "name"),
		field("spec", "imageContentSources"),
		field("spec", "configuration", "proxy"),
		field("spec", "configuration", "image"),
	}
}

// reconcileNodePool models what the NodePool controller writes into Cluster
// API for a pool.
//
// Upstream: hypershift-operator/controllers/nodepool/nodepool_controller.go
// (Reconcile) and capi.go (CAPI.Reconcile).
func (m *model) reconcileNodePool(ctx context.Context, ns, name string) (time.Duration, error) {
	np := m.get(gvrNP, ns, name)
	k := key("np", ns, name)
	if np == nil || np.GetDeletionTimestamp() != nil {
		m.forget(k)
		return 0, nil
	}
	cluster := str(np, "spec", "clusterName")
	hc := m.get(gvrHC, ns, cluster)
	if hc == nil {
		return 0, nil // waits for its HostedCluster (a HostedCluster event requeues it)
	}
	cpNS := ns + "-" + cluster
	inPlace := str(np, "spec", "management", "upgradeType") == "InPlace"

	// nodepool_controller.go, Reconcile: "If reconciliation is paused we
	// return before modifying any state" — except capi.Pause, which puts
	// cluster.x-k8s.io/paused on the pool's MachineSet and MachineDeployment
	// (capi.go: Pause, pauseMachineSet, pauseMachineDeployment).
	until := str(np, "spec", "pausedUntil")
	if paused, left := pausedUntil(until, m.clk.now()); paused {
		m.notePaused("NodePool", k, obj(np), until, true)
		if ms := m.get(gvrMS, cpNS, name); ms != nil && ms.GetAnnotations()[pausedAnn] != "true" {
			if err := m.patch(ctx, gvrMS, "MachineSet", cpNS, name, annPatch(pausedAnn, "true")); err != nil {
				return 0, err
			}
		}
		if md := m.get(gvrMD, cpNS, name); md != nil && md.GetAnnotations()[pausedAnn] != "true" {
			if err := m.patch(ctx, gvrMD, "MachineDeployment", cpNS, name, annPatch(pausedAnn, "true")); err != nil {
				return 0, err
			}
		}
		if left > 0 {
			return m.requeueFor(left), nil
		}
		return 0, nil
	}
	m.notePaused("NodePool", k, obj(np), "", false)

	// The target of the pool: CAPI.Version() (from spec.release.image) and
	// CAPI.Hash()/HashWithoutVersion() (the configuration: spec.config and
	// the release), which name the user-data Secret the template points at.
	version := releaseVersion(str(np, "spec", "release", "image"))
	config, _, _ := unstructured.NestedFieldNoCopy(np.Object, "spec", "config")
	global := hostedClusterRolloutInputs(hc)
	configHash := shortHash(config, global)
	targetConfigVersion := shortHash(config, version, global)
	userData := userDataName(name, targetConfigVersion)
	// token.Reconcile runs before capi.Reconcile (nodepool_controller.go,
	// reconcile): the target's token and user data exist before a template
	// names them; an outdated target's are retired (tokens.go).
	next, err := m.reconcileToken(ctx, np, cpNS, targetConfigVersion)
	if err != nil {
		return 0, err
	}
	var updating bool
	if inPlace {
		updating, err = m.nodePoolMachineSet(ctx, np, hc, cpNS, version, configHash, targetConfigVersion, userData)
	} else {
		updating, err = m.nodePoolMachineDeployment(ctx, np, hc, cpNS, version, configHash, userData)
	}
	if err != nil {
		return 0, err
	}
	if updating {
		m.rec.add(evNodePoolStatusSkipped, "NodePool", obj(np), "", "", "template written")
		return next, nil
	}
	g := gvrMD
	if inPlace {
		g = gvrMS
	}
	if o := m.get(g, cpNS, name); o != nil {
		if err := m.nodePoolStatusSync(ctx, np, o, inPlace, version, targetConfigVersion); err != nil {
			return 0, err
		}
	}
	if m.opt.realCAPI && !inPlace {
		if err := m.realMachineHealthCheck(ctx, np, cpNS, str(hc, "spec", "infraID")); err != nil {
			return 0, err
		}
	}
	return next, nil
}

// autoscaling reports spec.autoScaling {min, max} when set.
func autoscaling(np *unstructured.Unstructured) (int64, int64, bool) {
	if _, ok, _ := unstructured.NestedMap(np.Object, "spec", "autoScaling"); !ok {
		return 0, 0, false
	}
	return integer(np, 0, "spec", "autoScaling", "min"), integer(np, 0, "spec", "autoScaling", "max"), true
}

// replicasFor applies setMachineDeploymentReplicas / setMachineSetReplicas
// (capi.go): without autoscaling, the pool's spec.replicas; with it, the
// object's own replicas clamped into [min, max] (min at least 1: the model
// has no scale-from-zero platform).
func replicasFor(np *unstructured.Unstructured, current int64, hasCurrent bool) int64 {
	min, max, auto := autoscaling(np)
	if !auto {
		return integer(np, 0, "spec", "replicas")
	}
	if min == 0 {
		min = 1
	}
	switch {
	case !hasCurrent || current <= min:
		return min
	case current > max:
		return max
	}
	return current
}

func annPatch(k string, v interface{}) map[string]interface{} {
	return map[string]interface{}{"metadata": map[string]interface{}{"annotations": map[string]interface{}{k: v}}}
}

// nodePoolMachineDeployment writes the Replace pool's MachineDeployment.
//
// Upstream: capi.go, (*CAPI).reconcileMachineDeployment with
// setMachineDeploymentMetadata (nodePool annotation, cluster-name label and
// delete(machineDeployment.Annotations, capiv1.PausedAnnotation) on every
// reconcile), propagateVersionAndTemplate (template version and bootstrap
// data secret, written together when the user data changes) and
// setMachineDeploymentReplicas. The rolling-update strategy is HyperShift's
// default for Replace pools: maxSurge 1, maxUnavailable 0.
//
// The first result says the reconcile wrote a new template (or created the
// object): capi.go then returns before the status sync.
func (m *model) nodePoolMachineDeployment(ctx context.Context, np, hc *unstructured.Unstructured,
	cpNS, version, configHash, userData string) (bool, error) {
	name := np.GetName()
	infraID := str(hc, "spec", "infraID")
	md := m.get(gvrMD, cpNS, name)
	if md == nil {
		u := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
			"metadata": map[string]interface{}{
				"name": name, "namespace": cpNS,
				"annotations": map[string]interface{}{nodePoolAnn: obj(np)},
				"labels":      map[string]interface{}{clusterNameLabel: infraID},
			},
			"spec": map[string]interface{}{
				"clusterName": infraID,
				"replicas":    replicasFor(np, 0, false),
				"template":    mdTemplate(version, userData, configHash),
				"strategy": map[string]interface{}{"type": "RollingUpdate",
					"rollingUpdate": map[string]interface{}{"maxSurge": int64(1), "maxUnavailable": int64(0)}},
			},
		}}
		if err := m.realSpec(ctx, np, cpNS, infraID, u.Object["spec"].(map[string]interface{})); err != nil {
			return false, err
		}
		return true, m.create(ctx, gvrMD, u)
	}
	meta := map[string]interface{}{}
	ann := map[string]interface{}{}
	if md.GetAnnotations()[nodePoolAnn] != obj(np) {
		ann[nodePoolAnn] = obj(np)
	}
	if _, ok := md.GetAnnotations()[pausedAnn]; ok {
		ann[pausedAnn] = nil // delete(machineDeployment.Annotations, capiv1.PausedAnnotation)
	}
	if len(ann) > 0 {
		meta["annotations"] = ann
	}
	if md.GetLabels()[clusterNameLabel] != infraID && infraID != "" {
		meta["labels"] = map[string]interface{}{clusterNameLabel: infraID}
	}
	p := map[string]interface{}{}
	if len(meta) > 0 {
		p["metadata"] = meta
	}
	spec := map[string]interface{}{}
	if str(md, "spec", "template", "spec", "bootstrap", "dataSecretName") != userData {
		spec["template"] = mdTemplate(version, userData, configHash)
		if err := m.realTemplate(ctx, np, cpNS, infraID, spec["template"].(map[string]interface{})); err != nil {
			return false, err
		}
	}
	cur, has, _ := unstructured.NestedFieldNoCopy(md.Object, "spec", "replicas")
	want := replicasFor(np, integer(md, 0, "spec", "replicas"), has && cur != nil)
	if !has || integer(md, -1, "spec", "replicas") != want {
		spec["replicas"] = want
	}
	if len(spec) > 0 {
		p["spec"] = spec
	}
	_, updating := spec["template"]
	return updating, m.patch(ctx, gvrMD, "MachineDeployment", cpNS, name, p)
}

// mdTemplate is the part of spec.template HyperShift owns.
func mdTemplate(version, userData, configHash string) map[string]interface{} {
	return map[string]interface{}{
		"metadata": map[string]interface{}{"annotations": map[string]interface{}{
			"e2e-model.hcp-controller/config-hash": configHash}},
		"spec": map[string]interface{}{
			"version":   version,
			"bootstrap": map[string]interface{}{"dataSecretName": userData},
		},
	}
}

// nodePoolMachineSet writes the InPlace pool's MachineSet.
//
// Upstream: capi.go, (*CAPI).reconcileMachineSet: nodePool annotation,
// delete(machineSet.Annotations, capiv1.PausedAnnotation), and when the user
// data changes the template version and data secret plus the annotation
// hypershift.openshift.io/nodePoolTargetConfigVersion (and
// nodePoolCurrentConfigVersion when the MachineSet has none yet); replicas
// from setMachineSetReplicas. The in-place upgrader starts on the target
// annotation alone (see reconcileMachineSet in capi.go of the model).
func (m *model) nodePoolMachineSet(ctx context.Context, np, hc *unstructured.Unstructured,
	cpNS, version, configHash, targetConfigVersion, userData string) (bool, error) {
	name := np.GetName()
	infraID := str(hc, "spec", "infraID")
	ms := m.get(gvrMS, cpNS, name)
	if ms == nil {
		u := &unstructured.Unstructured{Object: map[string]interface{}{
			"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet",
			"metadata": map[string]interface{}{
				"name": name, "namespace": cpNS,
				"annotations": map[string]interface{}{nodePoolAnn: obj(np),
					targetConfigAnn: targetConfigVersion, currentConfigAnn: targetConfigVersion},
				"labels": map[string]interface{}{clusterNameLabel: infraID},
			},
			"spec": map[string]interface{}{
				"clusterName": infraID,
				"replicas":    replicasFor(np, 0, false),
				"template":    mdTemplate(version, userData, configHash),
			},
		}}
		if err := m.realSpec(ctx, np, cpNS, infraID, u.Object["spec"].(map[string]interface{})); err != nil {
			return false, err
		}
		return true, m.create(ctx, gvrMS, u)
	}
	ann := map[string]interface{}{}
	if ms.GetAnnotations()[nodePoolAnn] != obj(np) {
		ann[nodePoolAnn] = obj(np)
	}
	if _, ok := ms.GetAnnotations()[pausedAnn]; ok {
		ann[pausedAnn] = nil
	}
	spec := map[string]interface{}{}
	if str(ms, "spec", "template", "spec", "bootstrap", "dataSecretName") != userData {
		spec["template"] = mdTemplate(version, userData, configHash)
		if err := m.realTemplate(ctx, np, cpNS, infraID, spec["template"].(map[string]interface{})); err != nil {
			return false, err
		}
		ann[targetConfigAnn] = targetConfigVersion
		if _, ok := ms.GetAnnotations()[currentConfigAnn]; !ok {
			ann[currentConfigAnn] = targetConfigVersion
		}
	}
	cur, has, _ := unstructured.NestedFieldNoCopy(ms.Object, "spec", "replicas")
	want := replicasFor(np, integer(ms, 0, "spec", "replicas"), has && cur != nil)
	if !has || integer(ms, -1, "spec", "replicas") != want {
		spec["replicas"] = want
	}
	p := map[string]interface{}{}
	if len(ann) > 0 {
		p["metadata"] = map[string]interface{}{"annotations": ann}
	}
	if len(spec) > 0 {
		p["spec"] = spec
	}
	if err := m.patch(ctx, gvrMS, "MachineSet", cpNS, name, p); err != nil {
		return false, err
	}
	_, updating := spec["template"]
	// Recorded when the stored MachineSet carries the new target: an
	// admission webhook may have kept the old one in the same write.
	if t, ok := ann[targetConfigAnn]; ok && t != ms.GetAnnotations()[targetConfigAnn] &&
		m.get(gvrMS, cpNS, name) != nil && m.get(gvrMS, cpNS, name).GetAnnotations()[targetConfigAnn] == t {
		m.rec.add(evTargetConfigSet, "MachineSet", cpNS+"/"+name, ms.GetAnnotations()[targetConfigAnn], targetConfigVersion, "")
	}
	return updating, nil
}
