/* validate: the validating webhooks of policies and stanzas.
 *
 * A HostedChangeManagementPolicy, or the changeManagement stanza of a
 * HostedCluster or NodePool, that the controller would call invalid is
 * refused with the controller's own field path and message; one that
 * breaks the guard rails (ctl_set_guard()) is refused with the rule, by how
 * much, and the first period that falls short, judged on the effective
 * schedule from this replica's cache (the controller's plan view,
 * planview.h). Writes that leave the policy's spec or the object's stanza
 * as they were pass unchecked.
 */
#ifndef HCP_ADMISSION_VALIDATE_H
#define HCP_ADMISSION_VALIDATE_H

#include "admission/router.h"
#include "controller/planview.h"

/* The validating webhooks' paths. */
#define ADM_WEBHOOK_VALIDATE_POLICIES "/validate/hostedchangemanagementpolicies"
#define ADM_WEBHOOK_VALIDATE_HOSTEDCLUSTERS "/validate/hostedclusters"
#define ADM_WEBHOOK_VALIDATE_NODEPOOLS "/validate/nodepools"

/* Registers the validating webhooks on r, judged from controller c.
 * Returns 0 or the router's HCP_E* code. */
int adm_validation_register(adm_router_t *r, ctl_controller_t *c);

#endif
