/* version.h: the program's version, the chart's appVersion (the image tag the
 * chart deploys by default); test_image.sh checks that the two agree. */
#ifndef HCP_VERSION_H
#define HCP_VERSION_H

#define HCP_VERSION "0.1.0"

#endif
