package main

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HyperShift's bootstrap credentials of a NodePool and the NodePool status
// it derives from Cluster API, which a hold must leave true.
//
// Per target (the hash of the pool's configuration and release,
// targetConfigVersion here, ConfigGenerator.Hash() upstream) HyperShift keeps
// a token Secret "token-<pool>-<hash>" (a UUID the ignition server accepts)
// and a user-data Secret "user-data-<pool>-<hash>" (the ignition stub with
// that token) that the MachineDeployment/MachineSet template names. The
// model keeps both as ConfigMaps of its own role labels (like its machines):
// a test reads them, the model's informer sees them.

const (
	roleToken    = "token"
	roleUserData = "user-data"
	// Upstream: hyperv1.IgnitionServerTokenExpirationTimestampAnnotation.
	tokenExpiryAnn = "hypershift.openshift.io/ignition-token-expiration-timestamp"
	// Upstream: nodePoolAnnotationCurrentConfigVersion (nodepool_controller.go).
	npCurrentConfigVersionAnn = "hypershift.openshift.io/nodePoolCurrentConfigVersion"
	standsForAnn              = "e2e-model.hcp-controller/stands-for"
	evTokenExpirySet          = "token-expiry-set"        // the outdated token gets an expiry
	evTokenExpired            = "token-deleted"           // an expired token is removed
	evUserDataDeleted         = "user-data-deleted"       // the outdated user-data Secret is deleted
	evBootstrapFailed         = "bootstrap-failed"        // a machine cannot fetch its ignition: never a node
	evNodePoolStatus          = "nodepool-status"         // HyperShift writes NodePool status.version/replicas
	evNodePoolStatusSkipped   = "nodepool-status-skipped" // capi.go returned before the status sync
)

func tokenName(pool, hash string) string    { return "token-" + pool + "-" + hash }
func userDataName(pool, hash string) string { return "user-data-" + pool + "-" + hash }

// reconcileToken models token.Reconcile (nodepool/token.go): when the target
// differs from the NodePool's nodePoolCurrentConfigVersion annotation
// (isOutdated), cleanupOutdated sets an expiry of now + ttl on the old token
// (setExpirationTimestampOnToken, 2 h upstream; --token-ttl here) and
// deletes the old user-data Secret (every platform but AWS; the model's
// pools are platform None). Then the target's token (without an expiry:
// "active token should never be marked as expired") and user data are
// created. The token secret controller (ignition-server
// tokensecret_controller) deletes a token once its expiry has passed; the
// model does that here and asks to be called again at the next expiry.
func (m *model) reconcileToken(ctx context.Context, np *unstructured.Unstructured, cpNS, target string) (time.Duration, error) {
	pool := np.GetName()
	now := m.clk.now()
	current := np.GetAnnotations()[npCurrentConfigVersionAnn]
	if current != "" && current != target {
		if t := m.get(gvrCM, cpNS, tokenName(pool, current)); t != nil && t.GetAnnotations()[tokenExpiryAnn] == "" {
			at := now.Add(m.opt.tokenTTL).UTC().Format(time.RFC3339)
			if err := m.patch(ctx, gvrCM, "Secret", cpNS, t.GetName(), annPatch(tokenExpiryAnn, at)); err != nil {
				return 0, err
			}
			m.rec.add(evTokenExpirySet, "Secret", cpNS+"/"+t.GetName(), "", at, "")
		}
		if u := m.get(gvrCM, cpNS, userDataName(pool, current)); u != nil {
			if err := m.remove(ctx, gvrCM, "Secret", cpNS, u.GetName()); err != nil {
				return 0, err
			}
			m.rec.add(evUserDataDeleted, "Secret", cpNS+"/"+u.GetName(), "", "", "outdated target "+current)
		}
	}
	tok := m.get(gvrCM, cpNS, tokenName(pool, target))
	if tok == nil {
		if err := m.create(ctx, gvrCM, secretStandIn(cpNS, tokenName(pool, target), roleToken, obj(np),
			map[string]interface{}{"token": randSuffix() + randSuffix(), "release": str(np, "spec", "release", "image")})); err != nil {
			return 0, err
		}
		tok = m.get(gvrCM, cpNS, tokenName(pool, target))
	} else if tok.GetAnnotations()[tokenExpiryAnn] != "" {
		if err := m.patch(ctx, gvrCM, "Secret", cpNS, tok.GetName(), annPatch(tokenExpiryAnn, nil)); err != nil {
			return 0, err
		}
	}
	if m.get(gvrCM, cpNS, userDataName(pool, target)) == nil && tok != nil {
		if err := m.create(ctx, gvrCM, secretStandIn(cpNS, userDataName(pool, target), roleUserData, obj(np),
			map[string]interface{}{"token": str(tok, "data", "token"), "targetConfigVersionHash": target})); err != nil {
			return 0, err
		}
	}
	// The token secret controller: expired tokens go.
	var next time.Duration
	for _, t := range m.list(gvrCM, cpNS) {
		if t.GetLabels()[roleLabel] != roleToken || t.GetAnnotations()[nodePoolAnn] != obj(np) {
			continue
		}
		at, err := time.Parse(time.RFC3339, t.GetAnnotations()[tokenExpiryAnn])
		if err != nil {
			continue
		}
		if !now.Before(at) {
			if err := m.remove(ctx, gvrCM, "Secret", cpNS, t.GetName()); err != nil {
				return 0, err
			}
			m.rec.add(evTokenExpired, "Secret", cpNS+"/"+t.GetName(), "", "", "expired")
			continue
		}
		next = minPositive(next, m.requeueFor(at.Sub(now)))
	}
	return next, nil
}

func secretStandIn(ns, name, role, pool string, data map[string]interface{}) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]interface{}{
			"name": name, "namespace": ns,
			"labels":      map[string]interface{}{roleLabel: role},
			"annotations": map[string]interface{}{nodePoolAnn: pool, standsForAnn: "v1 Secret"},
		},
		"data": data,
	}}
}

// bootstrapProblem says why a machine made from user-data Secret name (in
// ns) cannot fetch its ignition, "" when it can: the Secret is gone, or the
// token it carries is gone or past its expiry (the ignition server refuses
// it: ignition-server tokensecret_controller / ignition server's token
// lookup).
func (m *model) bootstrapProblem(ns, userData string) string {
	if userData == "" {
		return ""
	}
	ud := m.get(gvrCM, ns, userData)
	if ud == nil || ud.GetLabels()[roleLabel] != roleUserData {
		return "missing user-data Secret " + userData
	}
	token := str(ud, "data", "token")
	for _, t := range m.list(gvrCM, ns) {
		if t.GetLabels()[roleLabel] != roleToken || str(t, "data", "token") != token {
			continue
		}
		if at, err := time.Parse(time.RFC3339, t.GetAnnotations()[tokenExpiryAnn]); err == nil && !m.clk.now().Before(at) {
			return "ignition token of " + userData + " expired"
		}
		return ""
	}
	return "ignition token of " + userData + " is gone"
}

// nodePoolStatusSync models the end of capi.go's reconcileMachineDeployment
// and reconcileMachineSet: when the template is at the target and the
// rollout complete (MachineDeploymentComplete; InPlace:
// machineSetInPlaceRolloutIsComplete, current == target config version),
// NodePool status.version becomes the target version and the
// nodePoolCurrentConfigVersion annotation the target hash; then
// status.replicas = the object's status.availableReplicas and the Ready
// condition is copied from it (when it has one). The caller does not call it
// when the reconcile changed the template ("We return early here during a
// version/config/MachineTemplate update"): that reconcile ends before the
// status.
func (m *model) nodePoolStatusSync(ctx context.Context, np, capiObj *unstructured.Unstructured, inPlace bool, version, target string) error {
	var complete bool
	if inPlace {
		a := capiObj.GetAnnotations()
		complete = a[currentConfigAnn] == a[targetConfigAnn]
	} else {
		r := integer(capiObj, -1, "spec", "replicas")
		// HyperShift reads Cluster API's v1beta1, whose
		// status.updatedReplicas a v1beta2 server keeps in
		// status.deprecated.v1beta1 (without it no rollout ever completes
		// here, and no target is ever retired).
		updated := m.updatedReplicas(capiObj)
		complete = updated == r && integer(capiObj, -2, "status", "replicas") == r &&
			integer(capiObj, -2, "status", "availableReplicas") == r &&
			integer(capiObj, 0, "status", "observedGeneration") >= capiObj.GetGeneration()
	}
	if complete && np.GetAnnotations()[npCurrentConfigVersionAnn] != target {
		if err := m.patch(ctx, gvrNP, "NodePool", np.GetNamespace(), np.GetName(), annPatch(npCurrentConfigVersionAnn, target)); err != nil {
			return err
		}
	}
	status := map[string]interface{}{}
	if complete && str(np, "status", "version") != version {
		status["version"] = version
	}
	if avail := integer(capiObj, 0, "status", "availableReplicas"); integer(np, -1, "status", "replicas") != avail {
		status["replicas"] = avail
	}
	conds, _, _ := unstructured.NestedSlice(capiObj.Object, "status", "conditions")
	for _, c := range conds {
		cm, ok := c.(map[string]interface{})
		if !ok || cm["type"] != "Ready" {
			continue
		}
		reason, _ := cm["reason"].(string)
		if reason == "" {
			reason = "AsExpected"
		}
		have, _, _ := unstructured.NestedSlice(np.Object, "status", "conditions")
		if out, changed := setStatusCondition(have, map[string]interface{}{"type": "Ready", "status": cm["status"],
			"reason": reason, "message": cm["message"], "observedGeneration": np.GetGeneration()}, m.clk.now()); changed {
			status["conditions"] = out
		}
		break
	}
	if m.opt.npUpdatingVersion {
		have, _, _ := unstructured.NestedSlice(np.Object, "status", "conditions")
		if c, ok := status["conditions"].([]interface{}); ok {
			have = c
		}
		current := str(np, "status", "version")
		if v, ok := status["version"].(string); ok {
			current = v
		}
		failed := ""
		if inPlace {
			failed = capiObj.GetAnnotations()[upgradeInProgressFalseAnn]
		}
		c := updatingVersionCondition(current, version, failed, np.GetGeneration())
		if inPlace {
			// inplace.go removes the condition before setting it again: a
			// new reason (InplaceUpgradeFailed) is a new condition, with
			// its own lastTransitionTime.
			have = withoutReasonChange(have, c)
		}
		if out, changed := setStatusCondition(have, c, m.clk.now()); changed {
			status["conditions"] = out
		}
	}
	if len(status) == 0 {
		return nil
	}
	if err := m.patch(ctx, gvrNP, "NodePool", np.GetNamespace(), np.GetName(),
		map[string]interface{}{"status": status}, "status"); err != nil {
		return err
	}
	to, _ := status["version"].(string)
	m.rec.add(evNodePoolStatus, "NodePool", obj(np), str(np, "status", "version"), to, "")
	return nil
}

// updatingVersionCondition is the NodePool's UpdatingVersion condition as
// HyperShift writes it (--nodepool-updating-version) for a pool whose
// status.version is current and whose release is at version: True, reason
// AsExpected, "Updating version in progress. Target version: <version>"
// while they differ; False, reason AsExpected, once they are the same. An
// InPlace pool whose in-place upgrader gave up (failed: the MachineSet's
// nodePoolUpgradeInProgressFalse message) gets False, reason
// InplaceUpgradeFailed, that message, while its version is updating.
//
// Upstream: hypershift-operator/controllers/nodepool/conditions.go
// (updatingVersionCondition, isUpdatingVersion: targetVersion !=
// status.version) and inplace.go (reconcileMachineSet: the
// nodePoolUpgradeInProgressFalse annotation gives status False, reason
// NodePoolInplaceUpgradeFailedReason).
func updatingVersionCondition(current, version, failed string, generation int64) map[string]interface{} {
	c := map[string]interface{}{"type": "UpdatingVersion", "status": "False", "reason": "AsExpected",
		"message": "", "observedGeneration": generation}
	switch {
	case current != version && failed != "":
		c["reason"], c["message"] = "InplaceUpgradeFailed", failed
	case current != version:
		c["status"], c["message"] = "True", "Updating version in progress. Target version: "+version
	}
	return c
}

// withoutReasonChange: conds without the condition of c's type when its
// reason is not c's.
func withoutReasonChange(conds []interface{}, c map[string]interface{}) []interface{} {
	out := make([]interface{}, 0, len(conds))
	for _, o := range conds {
		if have, ok := o.(map[string]interface{}); ok && have["type"] == c["type"] && have["reason"] != c["reason"] {
			continue
		}
		out = append(out, o)
	}
	return out
}
