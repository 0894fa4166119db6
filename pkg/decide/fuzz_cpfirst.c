/* libFuzzer target: release versions and the control plane's completed
 * releases from outside bytes. The input is a HostedCluster object
 * ({"status":{"version":{"history":[...]}}}) and, after its first newline,
 * a release image as a NodePool could ask for it. The version parser must
 * order consistently (a version equals itself; cmp(a, b) is -cmp(b, a)),
 * the newest completed version must parse, and the verdict's reason must be
 * a terminated string that is empty exactly when the image is fine. The
 * object's held release is judged against its availableUpdates and
 * conditionalUpdates (gate.h): a known verdict, terminated texts, and a
 * refusal exactly when it is gone or at risk. The release, as a NodePool
 * of the object would run it, is judged against the image as the control
 * plane's next release (skew.h): terminated words, a refusal only when
 * judged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide/cpfirst.h"
#include "decide/gate.h"
#include "decide/skew.h"
#include "decide/slim.h"
#include "decide/version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t jlen = nl ? (size_t)(nl - data) : size;
    char *image = NULL, ver[DECIDE_VERSIONLEN], why[512];
    int ab, ba, self;

    if (nl) {
        size_t ilen = size - jlen - 1;
        if ((image = malloc(ilen + 1)) == NULL)
            return 0;
        memcpy(image, nl + 1, ilen);
        image[ilen] = '\0';
        if (decide_release_version(image, ver, sizeof(ver))) {
            if (decide_version_cmp(ver, ver, &self) != 0 || self != 0)
                abort();
            if (decide_version_cmp(ver, "4.17.0", &ab) != 0 ||
                decide_version_cmp("4.17.0", ver, &ba) != 0 || (ab > 0) != (ba < 0) ||
                (ab == 0) != (ba == 0))
                abort();
            /* the minor line (skew.h): a version of major 4 or 5 has one,
             * the same as its own release's */
            long line;
            if (decide_version_minor_line(ver, &line) == 0 && (line < 0 || line > 1023))
                abort();
        }
    }
    json_t *obj = json_loadb((const char *)data, jlen, 0, NULL);
    if (obj) {
        decide_hc_t *hc = decide_hc_extract(obj);
        if (hc) {
            if (hc->cp_completed[0] && decide_version_cmp(hc->cp_completed, hc->cp_completed,
                                                          &self) != 0)
                abort();
            bool ok = decide_cp_first_ok(image, hc, why, sizeof(why));
            if (memchr(why, '\0', sizeof(why)) == NULL || ok != (why[0] == '\0'))
                abort();
            const decide_health_t *h = &hc->m.health;
            char rwhy[DECIDE_GATE_WHYLEN] = "";
            if (h->rec > DECIDE_REC_RISK ||
                !memchr(h->rec_risk, '\0', sizeof(h->rec_risk)) ||
                !memchr(h->rec_version, '\0', sizeof(h->rec_version)) ||
                decide_rec_ok(h, rwhy, sizeof(rwhy)) !=
                    (h->rec != DECIDE_REC_GONE && h->rec != DECIDE_REC_RISK) ||
                !memchr(rwhy, '\0', sizeof(rwhy)))
                abort();
            decide_hc_free(hc);
        }
        decide_np_t *np = decide_np_extract(obj);
        if (np) {
            decide_skew_pool_t pool = {"np", np};
            decide_skew_t sk;
            char msg[1024];
            decide_skew_check("spec.release.image", image, NULL, &pool, 1, size % 4, &sk, msg,
                              sizeof(msg));
            if (!memchr(msg, '\0', sizeof(msg)) || (sk.over > 0) != (msg[0] != '\0') ||
                (sk.over > 0 && !sk.judged) || sk.over + sk.unknown > 1)
                abort();
            decide_np_free(np);
        }
        json_decref(obj);
    }
    free(image);
    return 0;
}
