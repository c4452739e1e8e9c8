// compose-check loads a Compose file with compose-go, the loader Docker Compose itself uses (schema,
// interpolation, profiles, merge), and checks what meldstream asks of its compose file: every service
// has a healthcheck and a restart policy. No Docker engine is needed, so `make lint` runs it.
//
//	compose-check [-env NAME=VALUE]... [-profile NAME]... FILE
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
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var env, profiles list
	flag.Var(&env, "env", "NAME=VALUE the file may interpolate (repeatable)")
	flag.Var(&profiles, "profile", "a profile to enable (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: compose-check [-env NAME=VALUE]... [-profile NAME]... FILE")
		os.Exit(2)
	}
	if err := check(flag.Arg(0), env, profiles); err != nil {
		fmt.Fprintln(os.Stderr, "compose-check:", err)
		os.Exit(1)
	}
}

func check(file string, env, profiles []string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	options, err := cli.NewProjectOptions(
		[]string{abs},
		cli.WithWorkingDirectory(filepath.Dir(abs)),
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
		if service.HealthCheck == nil || service.HealthCheck.Disable || len(service.HealthCheck.Test) == 0 {
			problems = append(problems, fmt.Sprintf("service %s has no healthcheck", name))
		}
		if service.Restart == "" || service.Restart == "no" {
			problems = append(problems, fmt.Sprintf("service %s has no restart policy", name))
		}
	}
	sort.Strings(problems)
	sort.Strings(names)
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", file, strings.Join(problems, "; "))
	}
	fmt.Printf("compose-check: %s: %d services valid (%s), each with a healthcheck and a restart policy\n",
		file, len(names), strings.Join(names, ", "))
	return nil
}
