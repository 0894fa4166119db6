// hcp-hypershift runs HyperShift's own NodePool reconciler (the
// NodePoolReconciler of github.com/openshift/hypershift v0.1.70, imported
// unmodified) against an API server, with the fakes HyperShift's own tests
// use in place of a registry: the release provider answers the versions
// given with --release, and image metadata comes back with no labels. It
// creates nothing itself: a test provides every object the reconciler reads
// (the namespaces, the HostedCluster with its status, the Secrets and
// ConfigMaps these refer to, the NodePools) and plays Cluster API where it
// must (a MachineDeployment's status). The API server must serve the CRDs
// e2e/hypershift/build.sh stages.
//
//	hcp-hypershift --kubeconfig FILE --namespace NS --control-plane-namespace CPNS \
//	  [--release IMAGE=VERSION]... [--ready-file FILE]
//
// It runs until SIGTERM or SIGINT, then exits 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/openshift/api/image/docker10"
	hyperv1 "github.com/openshift/hypershift/api/hypershift/v1beta1"
	"github.com/openshift/hypershift/hypershift-operator/controllers/nodepool"
	hsapi "github.com/openshift/hypershift/support/api"
	"github.com/openshift/hypershift/support/releaseinfo"
	"github.com/openshift/hypershift/support/releaseinfo/fake"
	"github.com/openshift/hypershift/support/thirdparty/library-go/pkg/image/dockerv1client"
	"github.com/openshift/hypershift/support/upsert"
	supportutil "github.com/openshift/hypershift/support/util"
	"github.com/openshift/hypershift/support/util/fakeimagemetadataprovider"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	capiv1 "sigs.k8s.io/cluster-api/api/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// perVersionAMI wraps fake.FakeReleaseProvider; it only rewrites the us-east-1 x86_64 AMI so that
// each release version yields a distinct AMI (the stock fake returns the same AMI for every image).
type perVersionAMI struct{ inner *fake.FakeReleaseProvider }

func (p *perVersionAMI) Lookup(ctx context.Context, image string, ps []byte) (*releaseinfo.ReleaseImage, error) {
	ri, err := p.inner.Lookup(ctx, image, ps)
	if err != nil {
		return ri, err
	}
	a := ri.StreamMetadata.Architectures["x86_64"]
	a.Images.AWS.Regions = map[string]releaseinfo.CoreOSAWSImage{"us-east-1": {Release: ri.Version(), Image: "ami-" + strings.ReplaceAll(ri.Version(), ".", "")}}
	ri.StreamMetadata.Architectures["x86_64"] = a
	return ri, nil
}

// releases is --release IMAGE=VERSION, repeatable.
type releases map[string]string

func (r releases) String() string { return fmt.Sprint(map[string]string(r)) }
func (r releases) Set(s string) error {
	image, version, ok := strings.Cut(s, "=")
	if !ok || image == "" || version == "" {
		return fmt.Errorf("want IMAGE=VERSION, got %q", s)
	}
	r[image] = version
	return nil
}

func main() {
	// A flag set of its own: controller-runtime puts a --kubeconfig of its
	// own on the default one.
	fs := flag.NewFlagSet("hcp-hypershift", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `FILE` of the API server")
	ns := fs.String("namespace", "", "the `NS` of the HostedClusters and NodePools")
	cpNS := fs.String("control-plane-namespace", "", "the hosted control plane's namespace `CPNS` (where the MachineDeployments go)")
	rel := releases{}
	fs.Var(rel, "release", "`IMAGE=VERSION`: the version the fake release provider gives IMAGE (repeatable)")
	readyFile := fs.String("ready-file", "", "`FILE` written (with the pid) once the manager runs and its caches have synced")
	_ = fs.Parse(os.Args[1:])
	if *kubeconfig == "" || *ns == "" || *cpNS == "" || fs.NArg() > 0 {
		fs.Usage()
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	if err := run(*kubeconfig, *ns, *cpNS, rel, *readyFile); err != nil {
		fmt.Fprintln(os.Stderr, "hcp-hypershift:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, ns, cpNS string, rel releases, readyFile string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// The one platform whose machine templates the reconciler watches
	// (AWSMachineTemplates); unset, it would watch every platform's, whose
	// CRDs the API server does not serve.
	os.Setenv("PLATFORMS_INSTALLED", "AWS")
	// The cache covers the two namespaces only, so NodePools elsewhere on the
	// same API server (another test's) are left alone.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 hsapi.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}, cpNS: {}}},
	})
	if err != nil {
		return err
	}
	r := &nodepool.NodePoolReconciler{
		Client:                  mgr.GetClient(),
		ReleaseProvider:         &perVersionAMI{inner: &fake.FakeReleaseProvider{ImageVersion: rel}},
		CreateOrUpdateProvider:  upsert.New(false),
		HypershiftOperatorImage: "quay.io/hypershift/hypershift:hcp-hypershift",
		ImageMetadataProvider: &fakeimagemetadataprovider.FakeRegistryClientImageMetadataProvider{
			Result: &dockerv1client.DockerImageConfig{Config: &docker10.DockerConfig{Labels: map[string]string{}}}},
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	// The kinds the reconciler watches (SetupWithManager), registered with the
	// cache now so that they sync before the ready file is written and a kind
	// the API server does not serve fails the start rather than a reconcile.
	watched := append([]client.Object{&hyperv1.NodePool{}, &hyperv1.HostedCluster{}, &capiv1.MachineDeployment{},
		&capiv1.MachineSet{}, &corev1.Secret{}, &corev1.ConfigMap{}}, supportutil.GetNodePoolManagedResources("AWS")...)
	for _, o := range watched {
		if _, err := mgr.GetCache().GetInformer(ctx, o); err != nil {
			return fmt.Errorf("watching %T: %w", o, err)
		}
	}
	if readyFile != "" {
		// Runs once the manager has started its caches; written whole (a
		// rename), so a reader never sees half of it.
		err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			if !mgr.GetCache().WaitForCacheSync(ctx) {
				return nil
			}
			if err := os.WriteFile(readyFile+".tmp", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
				return err
			}
			return os.Rename(readyFile+".tmp", readyFile)
		}))
		if err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}
