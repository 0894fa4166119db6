package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// HyperShift's own status writes, which must keep the conditions other
// writers (hcp-controller's ChangesPaused, ChangesPending) put on the same
// objects.

// reconciliationActive is the condition HyperShift sets on every reconcile
// of a HostedCluster and a NodePool that is not paused.
//
// Upstream: support/util/pausereconcile.go, GenerateReconciliationActiveCondition
// (type ReconciliationActive, reason ReconciliationActive, message
// "Reconciliation active on resource", observedGeneration the object's).
func reconciliationActive(generation int64) map[string]interface{} {
	return map[string]interface{}{
		"type": "ReconciliationActive", "status": "True", "reason": "ReconciliationActive",
		"message": "Reconciliation active on resource", "observedGeneration": generation,
	}
}

// setStatusCondition puts c into conds the way meta.SetStatusCondition does:
// an existing condition of the same type keeps its lastTransitionTime unless
// its status changes, and gets reason, message and observedGeneration; a new
// one is appended with lastTransitionTime now. Every other condition is kept
// as it is. Reports whether anything changed.
//
// Upstream: k8s.io/apimachinery/pkg/api/meta/conditions.go SetStatusCondition
// (HostedCluster); hypershift-operator/controllers/nodepool/conditions.go
// SetStatusCondition, the same rules for NodePoolCondition (NodePool).
func setStatusCondition(conds []interface{}, c map[string]interface{}, now time.Time) ([]interface{}, bool) {
	for _, o := range conds {
		have, ok := o.(map[string]interface{})
		if !ok || have["type"] != c["type"] {
			continue
		}
		changed := false
		if have["status"] != c["status"] {
			have["status"] = c["status"]
			have["lastTransitionTime"] = now.UTC().Format(time.RFC3339)
			changed = true
		}
		for _, f := range []string{"reason", "message", "observedGeneration"} {
			if fmt.Sprint(have[f]) != fmt.Sprint(c[f]) {
				have[f] = c[f]
				changed = true
			}
		}
		return conds, changed
	}
	n := map[string]interface{}{"lastTransitionTime": now.UTC().Format(time.RFC3339)}
	for k, v := range c {
		n[k] = v
	}
	return append(conds, n), true
}

// hostedClusterStatusUpdate models the HostedCluster controller persisting
// its status: conditions set on the object as its informer cache holds it,
// then Status().Update of that whole object, conditional on the cached
// resourceVersion (a stale cache is answered 409 and the reconcile is
// requeued). Upstream does this on every reconcile, before the pause check
// ("Persist status updates"); an Update that changes nothing is a no-op for
// the API server, so the model sends one only when a condition changed.
// Returns true when the write met a conflict.
//
// Upstream: hypershift-operator/controllers/hostedcluster/
// hostedcluster_controller.go, Reconcile: meta.SetStatusCondition(...
// GenerateReconciliationActiveCondition(...)) then
// r.Client.Status().Update(ctx, hcluster), IsConflict => Requeue.
func (m *model) hostedClusterStatusUpdate(ctx context.Context, hc *unstructured.Unstructured) (bool, error) {
	conds, _, _ := unstructured.NestedSlice(hc.Object, "status", "conditions")
	conds, changed := setStatusCondition(conds, reconciliationActive(hc.GetGeneration()), m.clk.now())
	if !changed {
		return false, nil
	}
	if err := unstructured.SetNestedSlice(hc.Object, conds, "status", "conditions"); err != nil {
		return false, err
	}
	out, err := m.dyn.Resource(gvrHC).Namespace(hc.GetNamespace()).UpdateStatus(ctx, hc, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		m.rec.add(evStatusConflict, "HostedCluster", obj(hc), "", "", "")
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("status of HostedCluster %s: %w", obj(hc), err)
	}
	m.rec.wrote("HostedCluster", obj(hc))
	m.rec.add(evStatusUpdate, "HostedCluster", obj(hc), "", "ReconciliationActive", "")
	m.waitVersion(gvrHC, hc.GetNamespace(), hc.GetName(), out.GetResourceVersion())
	return false, nil
}

// nodePoolStatusPatch models the NodePool controller's patch helper: the
// conditions as set on the cached object go out in a merge patch of the
// status against the object as read (so the whole conditions list, without
// a resourceVersion), only when they differ.
//
// Upstream: hypershift-operator/controllers/nodepool/nodepool_controller.go,
// Reconcile: patch.NewHelper(nodePool, r.Client) then patchHelper.Patch
// (sigs.k8s.io/cluster-api/util/patch, a MergeFrom patch of the status).
func (m *model) nodePoolStatusPatch(ctx context.Context, np *unstructured.Unstructured) error {
	conds, _, _ := unstructured.NestedSlice(np.Object, "status", "conditions")
	conds, changed := setStatusCondition(conds, reconciliationActive(np.GetGeneration()), m.clk.now())
	if !changed {
		return nil
	}
	b, err := json.Marshal(map[string]interface{}{"status": map[string]interface{}{"conditions": conds}})
	if err != nil {
		return err
	}
	out, err := m.dyn.Resource(gvrNP).Namespace(np.GetNamespace()).Patch(ctx, np.GetName(), types.MergePatchType, b,
		metav1.PatchOptions{}, "status")
	if err != nil {
		return fmt.Errorf("status of NodePool %s: %w", obj(np), err)
	}
	m.rec.wrote("NodePool", obj(np))
	m.rec.add(evStatusUpdate, "NodePool", obj(np), "", "ReconciliationActive", "")
	m.waitVersion(gvrNP, np.GetNamespace(), np.GetName(), out.GetResourceVersion())
	return nil
}
