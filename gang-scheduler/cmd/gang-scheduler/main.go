// Command gang-scheduler is kube-scheduler v1.37 with the GangPlacement plugin
// registered: run it as a second scheduler (a profile with its own schedulerName) or
// in place of the default one, with a KubeSchedulerConfiguration such as
// ../../examples/gang-scheduler-config.yaml (and a Deployment: ../../examples/gang-scheduler.yaml).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"example.invalid/gang/gang-scheduler/plugin"
)

func main() {
	command := app.NewSchedulerCommand(app.WithPlugin(plugin.Name, plugin.New))
	code := cli.Run(command)
	os.Exit(code)
}
