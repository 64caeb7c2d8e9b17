// Package integration runs the gang-scheduler (kube-scheduler v1.37 with GangPlacement,
// configured by ../../examples/gang-scheduler-config.yaml) in process against a real
// kube-apiserver and a real etcd, as upstream's integration tests do
// (k8s.io/kubernetes/test/integration/framework). Every case asserts the bindings
// through the API: all or nothing, inside one domain.
//
// TestMain builds etcd from the go.etcd.io/etcd/server/v3 module pinned in go.mod
// (a tool dependency) into ../../bin/etcd when it is not there yet, and puts it first on
// PATH; nothing is installed by hand.
package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"k8s.io/kubernetes/test/integration/framework"
)

func TestMain(m *testing.M) {
	bin, err := filepath.Abs("../../bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	etcd := filepath.Join(bin, "etcd")
	if _, err := os.Stat(etcd); err != nil {
		fmt.Fprintln(os.Stderr, "building etcd into", etcd)
		cmd := exec.Command("go", "build", "-o", etcd, "go.etcd.io/etcd/server/v3")
		cmd.Dir = filepath.Dir(bin)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building etcd:", err)
			os.Exit(1)
		}
	}
	os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	framework.EtcdMain(m.Run)
}
