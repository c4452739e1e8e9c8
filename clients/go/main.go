// meldstream-go: a client in a second language. It creates a game on a running engine, plays every
// seat to the end with legal actions from the API, then re-derives every deal from docs/shuffle.md
// alone and checks it against what its seats saw (and, once the game is over, against the history).
//
//	meldstream-go -address 127.0.0.1:50051 -variant kalooki -players ann,bob,cy -tokens T0,T1,T2 [-option name=value]
//
// The players' tokens are access tokens (-tokens, sent as they are), or long-lived credentials the
// client exchanges at the identity service (-identity) for access tokens it renews before they expire:
// personal API tokens (-api-tokens) or sessions' refresh tokens (-refresh-tokens); renewer.go.
//
// Exit status 0 when the game ended and every check passed, 1 otherwise; one line per check on stdout.
//
//	meldstream-go load -address A -tables N -warmup S -seconds S -tokens T0,T1
//
// is the load of make bench-scale instead (load.go; -h lists its flags).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

type optionFlags map[string]int64

func (o optionFlags) String() string { return fmt.Sprint(map[string]int64(o)) }

func (o optionFlags) Set(text string) error {
	name, value, ok := strings.Cut(text, "=")
	number, err := strconv.ParseInt(value, 10, 64)
	if !ok || err != nil {
		return fmt.Errorf("an option is name=integer, got %q", text)
	}
	o[name] = number
	return nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "load" {
		os.Exit(runLoad(os.Args[2:]))
	}
	address := flag.String("address", "127.0.0.1:50051", "the engine's gRPC address")
	variant := flag.String("variant", "kalooki", "the variant to play")
	players := flag.String("players", "ann,bob,cy", "player ids, seat 0 first")
	given := addCredentialFlags(flag.String)
	gameID := flag.String("game", "", "the game id (empty: the engine picks one)")
	limit := flag.Duration("timeout", 5*time.Minute, "give up after this long")
	pace := flag.Duration("pace", 0, "pause this long before each action (a game at a person's speed, outlasting access tokens)")
	options := optionFlags{}
	flag.Var(options, "option", "a house-rule option name=integer (repeatable)")
	flag.Parse()
	if err := given.check(len(strings.Split(*players, ","))); err != nil {
		fmt.Fprintf(os.Stderr, "meldstream-go: %v\n", err)
		os.Exit(2)
	}
	os.Exit(run(*address, *gameID, *variant, strings.Split(*players, ","), options, given, *limit, *pace))
}

// run is main's work, as its exit status.
func run(address, gameID, variant string, ids []string, options optionFlags, given credentialFlags, limit, pace time.Duration) int {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	tokens, err := given.open(ctx, len(ids))
	if err != nil {
		fmt.Fprintf(os.Stderr, "meldstream-go: %v\n", err)
		return 1
	}
	defer tokens.close()
	defer func() {
		if line := tokens.summary(); line != "" {
			fmt.Fprintln(os.Stderr, "meldstream-go: "+line)
		}
	}()
	table, err := dial(address, tokens.seats)
	if err != nil {
		fmt.Fprintf(os.Stderr, "meldstream-go: %v\n", err)
		return 1
	}
	defer table.close()
	table.pace = pace
	game, err := table.play(ctx, gameID, variant, ids, options)
	if err != nil {
		fmt.Fprintf(os.Stderr, "meldstream-go: %s\n", describe(err))
		return 1
	}
	report := verify(ctx, table, game)
	for _, line := range report.lines {
		fmt.Println(line)
	}
	if len(report.failures) > 0 {
		for _, failure := range report.failures {
			fmt.Println("FAILED " + failure)
		}
		return 1
	}
	fmt.Printf("verified %s: %s, %d deals, %d reshuffles, %d actions\n",
		game.id, variant, report.deals, report.reshuffles, game.actions)
	return 0
}
