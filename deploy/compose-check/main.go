// compose-check loads a Compose file (or a file and its overrides) with compose-go, the loader Docker
// Compose itself uses (schema, interpolation, profiles, merge, !override), and checks what meldstream asks
// of its compose file:
//   - every service has a healthcheck and a restart policy;
//   - every service built from deploy/service.Dockerfile is built for itself (its SERVICE build argument
//     is its name) and checks its health with the image's `meldstream-service health`;
//   - the web gateway (`web`) runs at least 2 replicas and publishes no port: `web-proxy` depends on it
//     and is its one way in;
//   - each -secret's value (given by -env) is in the environment of exactly one service: no service holds
//     a secret but its own, under any name;
//   - each -publishes SERVICE=PORT: that service publishes that host port.
//
// No Docker engine is needed, so `make lint` runs it.
//
//	compose-check [-env NAME=VALUE]... [-profile NAME]... [-secret NAME]... [-publishes SERVICE=PORT]... FILE...
//
// The environment is only what -env gives, never this process's: a check of a file that requires a
// variable (`${NAME:?message}`) fails the same wherever it runs. Exit status 1 with the loader's error
// or the checks' findings, 0 with a summary of the services loaded.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

const (
	gateway      = "web"
	gatewayProxy = "web-proxy"
	minReplicas  = 2
	imageRecipe  = "deploy/service.Dockerfile"
)

var imageHealth = []string{"CMD", "meldstream-service", "health"}

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var env, profiles, secrets, publishes list
	flag.Var(&env, "env", "NAME=VALUE the file may interpolate (repeatable)")
	flag.Var(&profiles, "profile", "a profile to enable (repeatable)")
	flag.Var(&secrets, "secret", "NAME of an -env whose value exactly one service may hold (repeatable)")
	flag.Var(&publishes, "publishes", "SERVICE=PORT: that service publishes that host port (repeatable)")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: compose-check [-env NAME=VALUE]... [-profile NAME]... [-secret NAME]... [-publishes SERVICE=PORT]... FILE...")
		os.Exit(2)
	}
	if err := check(flag.Args(), env, profiles, secrets, publishes); err != nil {
		fmt.Fprintln(os.Stderr, "compose-check:", err)
		os.Exit(1)
	}
}

func check(files, env, profiles, secrets, publishes []string) error {
	var paths []string
	for _, file := range files {
		abs, err := filepath.Abs(file)
		if err != nil {
			return err
		}
		paths = append(paths, abs)
	}
	options, err := cli.NewProjectOptions(
		paths,
		cli.WithWorkingDirectory(filepath.Dir(paths[0])),
		cli.WithEnv(env),
		cli.WithProfiles(profiles),
		cli.WithInterpolation(true),
	)
	if err != nil {
		return err
	}
	project, err := cli.ProjectFromOptions(context.Background(), options)
	if err != nil {
		return err
	}
	var problems, names []string
	for name, service := range project.Services {
		names = append(names, name)
		problems = append(problems, serviceProblems(name, service)...)
	}
	problems = append(problems, gatewayProblems(project)...)
	problems = append(problems, secretProblems(project, env, secrets)...)
	problems = append(problems, publishProblems(project, publishes)...)
	sort.Strings(problems)
	sort.Strings(names)
	where := strings.Join(files, " + ")
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", where, strings.Join(problems, "; "))
	}
	fmt.Printf("compose-check: %s: %d services valid (%s), each with a healthcheck and a restart policy",
		where, len(names), strings.Join(names, ", "))
	if web, ok := project.Services[gateway]; ok {
		fmt.Printf("; %s runs %d replicas behind %s", gateway, web.GetScale(), gatewayProxy)
	}
	if len(secrets) > 0 {
		fmt.Printf("; %d secrets each held by one service", len(secrets))
	}
	fmt.Println()
	return nil
}

func serviceProblems(name string, service types.ServiceConfig) []string {
	var problems []string
	if service.HealthCheck == nil || service.HealthCheck.Disable || len(service.HealthCheck.Test) == 0 {
		problems = append(problems, fmt.Sprintf("service %s has no healthcheck", name))
	}
	if service.Restart == "" || service.Restart == "no" {
		problems = append(problems, fmt.Sprintf("service %s has no restart policy", name))
	}
	if service.Build != nil && filepath.ToSlash(service.Build.Dockerfile) == imageRecipe {
		if arg := service.Build.Args["SERVICE"]; arg == nil || *arg != name {
			problems = append(problems, fmt.Sprintf("service %s is not built with SERVICE=%s", name, name))
		}
		if service.HealthCheck != nil && strings.Join(service.HealthCheck.Test, " ") != strings.Join(imageHealth, " ") {
			problems = append(problems, fmt.Sprintf("service %s: healthcheck %v is not the image's %v",
				name, service.HealthCheck.Test, imageHealth))
		}
	}
	return problems
}

func gatewayProblems(project *types.Project) []string {
	web, ok := project.Services[gateway]
	if !ok {
		if len(project.Services) > 2 { // more than Kafka and Redis: the services are loaded, so is the gateway
			return []string{fmt.Sprintf("no service %s (the web gateway) beside the services", gateway)}
		}
		return nil
	}
	var problems []string
	if replicas := web.GetScale(); replicas < minReplicas {
		problems = append(problems, fmt.Sprintf("service %s runs %d replica(s), not at least %d", gateway, replicas, minReplicas))
	}
	if len(web.Ports) > 0 {
		problems = append(problems, fmt.Sprintf("service %s publishes ports (its replicas cannot share one): %s is its way in", gateway, gatewayProxy))
	}
	proxy, ok := project.Services[gatewayProxy]
	switch {
	case !ok:
		problems = append(problems, fmt.Sprintf("no service %s in front of %s", gatewayProxy, gateway))
	case len(proxy.Ports) == 0:
		problems = append(problems, fmt.Sprintf("service %s publishes no port", gatewayProxy))
	default:
		if _, depends := proxy.DependsOn[gateway]; !depends {
			problems = append(problems, fmt.Sprintf("service %s does not depend on %s", gatewayProxy, gateway))
		}
	}
	return problems
}

func secretProblems(project *types.Project, env, secrets []string) []string {
	values := map[string]string{}
	for _, pair := range env {
		name, value, _ := strings.Cut(pair, "=")
		values[name] = value
	}
	var problems []string
	for _, secret := range secrets {
		value, ok := values[secret]
		if !ok || value == "" {
			problems = append(problems, fmt.Sprintf("-secret %s has no -env value to look for", secret))
			continue
		}
		var holders []string
		for name, service := range project.Services {
			for variable, set := range service.Environment {
				if set != nil && strings.Contains(*set, value) {
					holders = append(holders, name+" ("+variable+")")
				}
			}
		}
		sort.Strings(holders)
		if len(holders) != 1 {
			problems = append(problems, fmt.Sprintf("secret %s is held by %d services, not 1: %s",
				secret, len(holders), strings.Join(holders, ", ")))
		}
	}
	return problems
}

func publishProblems(project *types.Project, publishes []string) []string {
	var problems []string
	for _, expected := range publishes {
		name, port, _ := strings.Cut(expected, "=")
		service, ok := project.Services[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("no service %s to publish port %s", name, port))
			continue
		}
		var published []string
		for _, p := range service.Ports {
			published = append(published, p.Published)
		}
		found := false
		for _, p := range published {
			found = found || p == port
		}
		if !found {
			problems = append(problems, fmt.Sprintf("service %s publishes %v, not port %s", name, published, port))
		}
	}
	return problems
}
