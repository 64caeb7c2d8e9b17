// Package integration runs the gang-scheduler (kube-scheduler v1.37 with GangPlacement,
// configured by ../../examples/gang-scheduler-config.yaml) in process against a real
// kube-apiserver and a real etcd, as upstream's integration tests do
// (k8s.io/kubernetes/test/integration/framework). Every case asserts the bindings
// through the API: all or nothing, inside one domain.
//
// TestMain builds etcd from the go.etcd.io/etcd/server/v3 module pinned in go.mod into
// ../../bin/etcd when it is not there yet (internal/etcdbin); nothing is installed by hand.
package integration

import (
	"fmt"
	"os"
	"testing"

	"k8s.io/kubernetes/test/integration/framework"

	"example.invalid/gang/gang-scheduler/internal/etcdbin"
)

func TestMain(m *testing.M) {
	if err := etcdbin.OnPath("../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	framework.EtcdMain(m.Run)
}
