// Package etcdbin builds the etcd the integration tests need, from the
// go.etcd.io/etcd/server/v3 module that go.mod pins (a tool dependency; its root
// package is the etcd main), into the module's bin/ directory, and puts that directory
// first on PATH, where k8s.io/kubernetes/test/integration/framework looks for etcd.
package etcdbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// OnPath builds bin/etcd unless it is there and newer than go.mod, then prepends bin/
// to PATH. moduleRoot is the gang-scheduler module's directory.
func OnPath(moduleRoot string) error {
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		return err
	}
	bin := filepath.Join(root, "bin")
	etcd := filepath.Join(bin, "etcd")
	built, err := os.Stat(etcd)
	mod, modErr := os.Stat(filepath.Join(root, "go.mod"))
	if modErr != nil {
		return fmt.Errorf("%s is not the gang-scheduler module: %w", root, modErr)
	}
	if err != nil || built.ModTime().Before(mod.ModTime()) {
		fmt.Fprintln(os.Stderr, "building etcd (go.etcd.io/etcd/server/v3) into", etcd)
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", etcd, "go.etcd.io/etcd/server/v3")
		cmd.Dir = root
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building etcd: %w", err)
		}
	}
	return os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}
