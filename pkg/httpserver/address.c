/*
 * httpserver/address.c - bind addresses ("HOST:PORT", "[V6]:PORT", ":PORT",
 * "PORT") parsed into a socket address; pure.
 */
#include "httpserver/httpserver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_port(const char *s, int *port)
{
    long v = 0;
    const char *p;

    if (*s == '\0' || strlen(s) > 5)
        return -1;
    for (p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (v > 65535)
        return -1;
    *port = (int)v;
    return 0;
}

/* The socket address of a parsed bind address: [ipv6]:port, :port (every
 * address, IPv6 and IPv4) or ipv4:port (localhost is 127.0.0.1). */
static int fill_address(const char *bind_address, const char *host, int bracketed, int port,
                        struct sockaddr_storage *addr, socklen_t *len, int *any, char *err,
                        size_t errlen)
{
    if (bracketed) {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;

        if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1) {
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "bind address \"%.80s\": \"%s\" is not an IPv6 address", bind_address,
                            host);
        }
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*a6);
    } else if (host[0] == '\0') {
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)addr;

        a6->sin6_family = AF_INET6;
        a6->sin6_addr = in6addr_any;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof(*a6);
        *any = 1;
    } else {
        struct sockaddr_in *a4 = (struct sockaddr_in *)addr;

        if (strcmp(host, "localhost") == 0)
            a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1) {
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "bind address \"%.80s\": host \"%s\" is not an IPv4 address (use [addr] "
                            "for IPv6; names other than localhost are not resolved)",
                            bind_address, host);
        }
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof(*a4);
    }
    return 0;
}

int http_parse_bind_address(const char *bind_address, struct sockaddr_storage *addr,
                            socklen_t *len, int *any, char *err, size_t errlen)
{
    char host[64];
    const char *port_str, *colon;
    size_t hlen;
    int port, bracketed = 0;

    memset(addr, 0, sizeof(*addr));
    *any = 0;
    if (bind_address == NULL || *bind_address == '\0') {
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "empty bind address (want host:port, e.g. \":8080\")");
    }
    if (bind_address[0] == '[') {
        const char *close = strchr(bind_address, ']');

        if (close == NULL || close[1] != ':') {
            return hcp_errf(err, errlen, HCP_EINVAL, "bind address \"%.80s\": want [ipv6]:port",
                            bind_address);
        }
        hlen = (size_t)(close - bind_address - 1);
        if (hlen == 0 || hlen >= sizeof(host)) {
            return hcp_errf(err, errlen, HCP_EINVAL, "bind address \"%.80s\": bad IPv6 address",
                            bind_address);
        }
        memcpy(host, bind_address + 1, hlen);
        host[hlen] = '\0';
        port_str = close + 2;
        bracketed = 1;
    } else {
        colon = strrchr(bind_address, ':');
        if (colon == NULL) {
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "bind address \"%.80s\": missing port (want host:port, e.g. \":8080\")",
                            bind_address);
        }
        hlen = (size_t)(colon - bind_address);
        if (hlen >= sizeof(host) || memchr(bind_address, ':', hlen) != NULL) {
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "bind address \"%.80s\": IPv6 addresses need brackets, e.g. \"[::1]:8080\"",
                            bind_address);
        }
        memcpy(host, bind_address, hlen);
        host[hlen] = '\0';
        port_str = colon + 1;
    }
    if (parse_port(port_str, &port) != 0) {
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "bind address \"%.80s\": port \"%.16s\" is not a number in 0..65535",
                        bind_address, port_str);
    }

    return fill_address(bind_address, host, bracketed, port, addr, len, any, err, errlen);
}

