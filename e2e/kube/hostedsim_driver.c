/* hostedsim_driver: drives e2e/hostedsim (see hostedsim_driver.h). */
#include "hostedsim_driver.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdbool.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t sim_pid;
static char sim_dir[512], control[128];

static void fail(const char *what)
{
    fprintf(stderr, "hostedsim: %s\n", what);
    hostedsim_stop();
    exit(1);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        *len = fread(buf, 1, (size_t)n, f);
        buf[*len] = '\0';
    }
    fclose(f);
    return buf;
}

void hostedsim_start(int n, const char *dir)
{
    char bin[1024], cmd[1200], path[600], count[16];
    snprintf(cmd, sizeof(cmd), "e2e/hostedsim/build.sh >&2 && e2e/hostedsim/build.sh --path");
    FILE *f = popen(cmd, "r");
    if (!f || !fgets(bin, sizeof(bin), f) || pclose(f) != 0)
        fail("cannot build e2e/hostedsim (needs Go, see e2e/hostedsim/build.sh)");
    bin[strcspn(bin, "\n")] = '\0';
    snprintf(sim_dir, sizeof(sim_dir), "%s", dir);
    snprintf(count, sizeof(count), "%d", n);
    sim_pid = fork();
    if (sim_pid < 0)
        fail(strerror(errno));
    if (sim_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* no orphan when the test is killed */
        execl(bin, bin, "-n", count, "-dir", dir, (char *)NULL);
        _exit(127);
    }
    snprintf(path, sizeof(path), "%s/control", dir);
    for (int i = 0; i < 600; i++) {
        size_t len = 0;
        char *s = slurp(path, &len);
        if (s && len > 0) {
            s[strcspn(s, "\n")] = '\0';
            snprintf(control, sizeof(control), "%s", s);
            free(s);
            return;
        }
        free(s);
        int st;
        if (waitpid(sim_pid, &st, WNOHANG) == sim_pid) {
            sim_pid = 0;
            fail("exited before listening");
        }
        usleep(100000);
    }
    fail("not listening after 60 s");
}

void hostedsim_stop(void)
{
    int st;
    if (sim_pid > 0) {
        kill(sim_pid, SIGTERM);
        waitpid(sim_pid, &st, 0);
        sim_pid = 0;
    }
}

char *hostedsim_kubeconfig_b64(int i)
{
    char path[600];
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/kubeconfig/%d.b64", sim_dir, i);
    return slurp(path, &len);
}

/* ---- the control API ---------------------------------------------------------- */

typedef struct body {
    char *buf;
    size_t len;
} body_t;

static size_t collect(char *ptr, size_t size, size_t nmemb, void *ud)
{
    body_t *b = ud;
    size_t n = size * nmemb;
    char *nb = realloc(b->buf, b->len + n + 1);
    if (!nb)
        return 0;
    memcpy(nb + b->len, ptr, n);
    b->len += n;
    nb[b->len] = '\0';
    b->buf = nb;
    return n;
}

/* GET or POST (post) control path; returns the body (caller frees) or NULL. */
static char *call(const char *path, bool post)
{
    char url[512];
    body_t b = {0};
    long code = 0;
    CURL *c = curl_easy_init();
    if (!c)
        return NULL;
    snprintf(url, sizeof(url), "%s%s", control, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    if (post)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(c);
    if (rc != CURLE_OK || code != 200) {
        free(b.buf);
        return NULL;
    }
    return b.buf ? b.buf : strdup("");
}

int hostedsim_stats(int index, hostedsim_stats_t *out)
{
    char *body = call("/stats", false);
    json_t *j = body ? json_loads(body, 0, NULL) : NULL;
    free(body);
    if (!j)
        return -1;
    json_t *t = json_object_get(j, "total"), *per = json_array_get(json_object_get(j, "per"),
                                                                     (size_t)index);
    memset(out, 0, sizeof(*out));
    out->gets = json_number_value(json_object_get(t, "gets"));
    out->patches = json_number_value(json_object_get(t, "patches"));
    out->lists = json_number_value(json_object_get(t, "lists"));
    out->watches = json_number_value(json_object_get(t, "watches"));
    out->requests = json_number_value(json_object_get(t, "requests"));
    out->first_requests = json_number_value(json_object_get(t, "firstRequests"));
    out->admin_requests = json_number_value(json_object_get(t, "adminRequests"));
    out->sa_requests = json_number_value(json_object_get(t, "serviceAccountRequests"));
    out->tokens = json_number_value(json_object_get(t, "tokens"));
    out->last_projected = json_number_value(json_object_get(t, "projectedAt"));
    out->projected = (int)json_integer_value(json_object_get(j, "projected"));
    out->dropped_at = json_number_value(json_object_get(per, "droppedAt"));
    out->restored_at = json_number_value(json_object_get(per, "restoredAt"));
    json_decref(j);
    return 0;
}

int hostedsim_drop(int index)
{
    char path[64];
    snprintf(path, sizeof(path), "/drop?i=%d", index);
    char *b = call(path, true);
    int rc = b ? 0 : -1;
    free(b);
    return rc;
}

int hostedsim_mode(int index, const char *mode)
{
    char path[96];
    snprintf(path, sizeof(path), "/mode?i=%d&mode=%s", index, mode);
    char *b = call(path, true);
    int rc = b ? 0 : -1;
    free(b);
    return rc;
}
