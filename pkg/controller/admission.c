/* admission.c: the controller's admission webhooks (DESIGN.md 3.6). */
#include "admission/router.h"
#include "controller/internal.h"

int ctl_admission_register(ctl_controller_t *c, struct adm_router *r)
{
    (void)c;
    (void)r;
    return 0;
}
