// etcd for make cluster-test, at the version the cluster's Kubernetes pins,
// built from the module proxy (a module of its own, as ../k8s).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
