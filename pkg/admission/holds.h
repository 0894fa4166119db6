/* holds: the admission webhooks that hold a change where it starts
 * (DESIGN.md 3.6).
 *
 * /hold/hostedclusters and /hold/nodepools keep a HostedCluster's release,
 * the HostedCluster fields that roll every NodePool, and a NodePool's
 * rollout-triggering fields where they were, and record the request;
 * /hold/machinedeployments and /hold/machinesets keep the controller's
 * mid-rollout pause; /hold/configmaps refuses a change of the content of a
 * ConfigMap a restricted NodePool names. Each answers from this replica's
 * caches through the controller's read-only plan view (planview.h), leader
 * or not, and keeps nothing.
 */
#ifndef HCP_ADMISSION_HOLDS_H
#define HCP_ADMISSION_HOLDS_H

#include "admission/router.h"
#include "controller/planview.h"

/* The webhook paths (the webhook configurations name them). */
#define ADM_WEBHOOK_HOSTEDCLUSTERS "/hold/hostedclusters"
#define ADM_WEBHOOK_NODEPOOLS "/hold/nodepools"
#define ADM_WEBHOOK_MACHINEDEPLOYMENTS "/hold/machinedeployments"
#define ADM_WEBHOOK_MACHINESETS "/hold/machinesets"
#define ADM_WEBHOOK_CONFIGMAPS "/hold/configmaps"

/* Registers the holds on r, answered from controller c (which from now on
 * pauses a NodePool's MachineDeployment only in mid-rollout:
 * ctl_set_admission_holds()). Returns 0 or the router's HCP_E* code. */
int adm_holds_register(adm_router_t *r, ctl_controller_t *c);

#endif
