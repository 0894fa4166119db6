/* testutil_tls.c: the test certificates (self-signed, ECDSA P-256, valid for
 * 127.0.0.1 and localhost until 2126). Not secrets: they exist for tests. */
#include "httpserver/testutil_tls.h"

const char testutil_tls_cert_a[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBsjCCAVmgAwIBAgIUILnRnYdVRgj4bgRsfrkjeO6c1ZEwCgYIKoZIzj0EAwIw\n"
    "IDEeMBwGA1UEAwwVaGNwLWNvbnRyb2xsZXItdGVzdC1hMCAXDTI2MTEyMzIyMTIx\n"
    "MloYDzIxMjYxMDMwMjIxMjEyWjAgMR4wHAYDVQQDDBVoY3AtY29udHJvbGxlci10\n"
    "ZXN0LWEwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAR/OhSZegfkX5jmrxC+NOqc\n"
    "/9VXmMkj3/YFGdWPjoF3kZQpIiAm+jZWj2yuLCYjW48MWwpYn+F9Ua06ZVHPtMxV\n"
    "o28wbTAdBgNVHQ4EFgQU17pGZCcbvlYiZx+cEgTbuja7UeYwHwYDVR0jBBgwFoAU\n"
    "17pGZCcbvlYiZx+cEgTbuja7UeYwDwYDVR0TAQH/BAUwAwEB/zAaBgNVHREEEzAR\n"
    "hwR/AAABgglsb2NhbGhvc3QwCgYIKoZIzj0EAwIDRwAwRAIgZK/+qKBILzGE2pRv\n"
    "p3YdWYKIHl7mXf+PibuKtezrOQYCIGTVTXIFuOifg+mcFayU39gG9tcDVb9igQCA\n"
    "Zu+P8WR2\n"
    "-----END CERTIFICATE-----\n";

const char testutil_tls_key_a[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgfm0UXFXWqQsMxnhX\n"
    "mJzi0w6okjesLRwlTABOgBjGD0KhRANCAAR/OhSZegfkX5jmrxC+NOqc/9VXmMkj\n"
    "3/YFGdWPjoF3kZQpIiAm+jZWj2yuLCYjW48MWwpYn+F9Ua06ZVHPtMxV\n"
    "-----END PRIVATE KEY-----\n";

const char testutil_tls_cert_b[] =
    "-----BEGIN CERTIFICATE-----\n"
    "MIIBszCCAVmgAwIBAgIUA3NRBo79mZfxhbg/y7vSt3MJJ7MwCgYIKoZIzj0EAwIw\n"
    "IDEeMBwGA1UEAwwVaGNwLWNvbnRyb2xsZXItdGVzdC1iMCAXDTI2MTEyMzIyMTIx\n"
    "MloYDzIxMjYxMDMwMjIxMjEyWjAgMR4wHAYDVQQDDBVoY3AtY29udHJvbGxlci10\n"
    "ZXN0LWIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQKxVcIIUG0p04Jk2qmq2Ib\n"
    "d9Csv+Q+WsdCW59nVWw7QDBRM40TYl3w79B36hncIoJnnd9/pdQlEZ5E4nB/33VW\n"
    "o28wbTAdBgNVHQ4EFgQUUOZzts4AWOw9gJu44hWEyaw7wPEwHwYDVR0jBBgwFoAU\n"
    "UOZzts4AWOw9gJu44hWEyaw7wPEwDwYDVR0TAQH/BAUwAwEB/zAaBgNVHREEEzAR\n"
    "hwR/AAABgglsb2NhbGhvc3QwCgYIKoZIzj0EAwIDSAAwRQIhAJ0Y7qCif0Jtt6Nd\n"
    "3gQIQFkYHrYogTUTF2SvBtLVIOd6AiBSyjqKh5l3blURM6QFj+QXQmyTTRABvLts\n"
    "GG+Lt8gjPw==\n"
    "-----END CERTIFICATE-----\n";

const char testutil_tls_key_b[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgywVUZsAQ6MCU5bYy\n"
    "Xxe8TcJRbFt3O0Si6Yl55Xk39PqhRANCAAQKxVcIIUG0p04Jk2qmq2Ibd9Csv+Q+\n"
    "WsdCW59nVWw7QDBRM40TYl3w79B36hncIoJnnd9/pdQlEZ5E4nB/33VW\n"
    "-----END PRIVATE KEY-----\n";
