package main

// The load mode: `make bench-scale`'s load generator, as cheap per action as a client can be, since it
// shares the machine's cores with the engines it measures (the Python load, meldstream_benches.engine_load,
// costs about 1 ms of CPU an action). It speaks engine_load's protocol and plays as it does.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	pb "github.com/meldstream/meldstream/clients/go/gen/gamev1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

const (
	ownerTrailer = "meldstream-owner" // names the engine owning a game, on an UNAVAILABLE not_owner answer
	retryFor     = 120 * time.Second  // how long a game may stay unavailable before the load gives up
	callTimeout  = 10 * time.Second
	resumeAfter  = 200 * time.Millisecond // the pause before a broken stream is opened again
)

const loadUsage = `meldstream-go load: the load of make bench-scale, tables of two seats moving at random among the
legal actions their streams list, in games with random ids (so every partition gets some), all sent to
-address first and on to whichever engine owns each game. After -warmup seconds it prints "window",
counts the acknowledged actions for -seconds, prints "done ACTIONS SECONDS", then plays on until SIGTERM.

	meldstream-go load -address A -tables N -warmup S -seconds S -variant rummy40 -players p0,p1 -tokens T0,T1

The seats' tokens are -tokens (access tokens, sent as they are) or, for a load that outlasts them,
-api-tokens or -refresh-tokens with -identity: access tokens renewed before they expire (renewer.go).
`

// runLoad is the load mode's main: its exit status.
func runLoad(args []string) int {
	flags := flag.NewFlagSet("load", flag.ContinueOnError)
	flags.Usage = func() { fmt.Fprint(flags.Output(), loadUsage); flags.PrintDefaults() }
	address := flags.String("address", "127.0.0.1:50051", "the engine every call goes to first")
	tables := flags.Int("tables", 48, "tables of the load")
	warmup := flags.Float64("warmup", 5, "seconds of play before the window")
	seconds := flags.Float64("seconds", 20, "the measured window, in seconds")
	variant := flags.String("variant", "rummy40", "the variant every table plays")
	players := flags.String("players", "p0,p1", "the two player ids, seat 0 first")
	given := addCredentialFlags(flags.String)
	if err := flags.Parse(args); err != nil {
		return 2
	}
	ids := strings.Split(*players, ",")
	if len(ids) != 2 || *tables < 1 {
		fmt.Fprintln(os.Stderr, "meldstream-go load: -players names two seats, and -tables is at least 1")
		return 2
	}
	if err := given.check(len(ids)); err != nil {
		fmt.Fprintf(os.Stderr, "meldstream-go load: %v\n", err)
		return 2
	}
	if os.Getenv("GOMAXPROCS") == "" {
		// One thread runs every table: the load waits on the network, and goroutines handed between
		// threads cost futex wake-ups and idle spinning (a fifth of its CPU on 2 cores, profiled).
		runtime.GOMAXPROCS(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	tokens, err := given.open(ctx, len(ids))
	if err != nil {
		fmt.Fprintf(os.Stderr, "meldstream-go load: %v\n", err)
		return 1
	}
	defer tokens.close()
	l := &load{engines: newEngines(*address), variant: *variant, players: ids}
	for _, seat := range tokens.seats {
		l.seats = append(l.seats, as(ctx, seat))
	}
	failed := make(chan error, *tables)
	for range *tables {
		go func() { failed <- l.table() }()
	}
	go func() {
		if pause(ctx, *warmup) != nil {
			return
		}
		fmt.Println("window")
		began, acked := time.Now(), l.acked.Load()
		if pause(ctx, *seconds) == nil {
			fmt.Printf("done %d %.3f\n", l.acked.Load()-acked, time.Since(began).Seconds())
		}
	}()
	select {
	case err := <-failed:
		if ctx.Err() == nil { // a table that fails ends the load, as in engine_load
			fmt.Fprintf(os.Stderr, "meldstream-go load: %s\n", describe(err))
			return 1
		}
	case <-ctx.Done():
	}
	fmt.Fprintf(os.Stderr, "meldstream-go load: stopped: %d actions acknowledged, %d calls sent on to the owner "+
		"an engine named, %d calls retried, %d streams reopened\n",
		l.acked.Load(), l.engines.redirects.Load(), l.engines.retries.Load(), l.engines.resumes.Load())
	if line := tokens.summary(); line != "" {
		fmt.Fprintln(os.Stderr, "meldstream-go load: "+line)
	}
	return 0
}

func pause(ctx context.Context, seconds float64) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(seconds * float64(time.Second))):
		return nil
	}
}

// engines holds one connection per engine address, shared by every table, and the calls' routing.
type engines struct {
	target string
	mu     sync.Mutex
	apis   map[string]pb.GameServiceClient
	// What the tables did not see: calls sent on to a named owner, calls retried after UNAVAILABLE,
	// streams opened again after they broke.
	redirects, retries, resumes atomic.Int64
}

func newEngines(target string) *engines {
	return &engines{target: target, apis: map[string]pb.GameServiceClient{}}
}

func (e *engines) api(address string) (pb.GameServiceClient, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if api, ok := e.apis[address]; ok {
		return api, nil
	}
	// Static flow-control windows: grpc-go otherwise sizes them with BDP pings, and small windows' updates
	// cost a write every few updates (with one thread, see runLoad: ~0.8 -> ~0.5 ms of CPU an action).
	options := append(withRenewal(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(1<<20), grpc.WithInitialConnWindowSize(1<<24),
		grpc.WithDefaultServiceConfig(retryRateLimited))
	conn, err := grpc.NewClient(address, options...)
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", address, err)
	}
	e.apis[address] = pb.NewGameServiceClient(conn)
	return e.apis[address], nil
}

// game is one game's id and the engine last found owning it, shared by its seats.
type game struct {
	id    string
	mu    sync.Mutex
	route string // "" until an engine names another owner: the target
}

func (g *game) address(target string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.route == "" {
		return target
	}
	return g.route
}

// moved notes the owner a refusal from address names; false when it names none, or address itself.
func (g *game) moved(address string, trailer metadata.MD) bool {
	owners := trailer.Get(ownerTrailer)
	if len(owners) == 0 || owners[0] == "" || owners[0] == address {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.route = owners[0]
	return true
}

// away forgets address as the game's owner after it was unavailable: the target is asked again and
// names the owner as it knows it now, rather than the load waiting on an engine that may never answer.
func (g *game) away(address string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.route == address {
		g.route = ""
	}
}

func retryable(err error) bool {
	code := status.Code(err)
	return code == codes.Unavailable || code == codes.DeadlineExceeded
}

// call sends one unary call to the game's owner: on at once to an owner a refusal names, again after
// a backoff while the engine is unavailable without naming one (starting, or partitions moving).
func (e *engines) call(ctx context.Context, g *game, send func(context.Context, pb.GameServiceClient, grpc.CallOption) error) error {
	deadline := time.Now().Add(retryFor)
	delay := 50 * time.Millisecond
	address := g.address(e.target)
	for {
		api, err := e.api(address)
		if err != nil {
			return err
		}
		var trailer metadata.MD
		timed, cancel := context.WithTimeout(ctx, callTimeout)
		err = send(timed, api, grpc.Trailer(&trailer))
		cancel()
		if err == nil {
			return nil
		}
		if g.moved(address, trailer) {
			address = g.address(e.target)
			e.redirects.Add(1)
			continue
		}
		if !retryable(err) || ctx.Err() != nil || time.Now().Add(delay).After(deadline) {
			return err
		}
		g.away(address)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
		address = g.address(e.target)
		e.retries.Add(1)
	}
}

// follow hands each update of seat's stream to each until it answers true, resuming after the last
// seq received at the owner a refusal names, or at the target after a pause when the engine is away,
// or at once with a renewed token when the stream was refused token_expired (once in a row).
func (e *engines) follow(ctx context.Context, g *game, seat int, each func(*pb.GameUpdate) (bool, error)) error {
	var last uint64
	deadline := time.Now().Add(retryFor)
	renewed := false
	for {
		opened := time.Now()
		address := g.address(e.target)
		api, err := e.api(address)
		if err != nil {
			return err
		}
		open, cancel := context.WithCancel(ctx)
		stream, err := api.StreamGame(open, &pb.StreamGameRequest{GameId: g.id, Seat: uint32(seat), AfterSeq: last})
		var trailer metadata.MD
		for err == nil {
			var message *pb.StreamGameResponse
			if message, err = stream.Recv(); err != nil {
				trailer = stream.Trailer()
				break
			}
			last, renewed = max(last, message.Update.Seq), false
			deadline = time.Now().Add(retryFor)
			if done, failure := each(message.Update); done || failure != nil {
				cancel()
				return failure
			}
		}
		cancel()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if g.moved(address, trailer) {
			e.redirects.Add(1)
			continue
		}
		if r := renewerOf(ctx); isExpired(err) && !renewed && r != nil && r.renews() {
			renewed = true
			if _, renewErr := r.renewedSince(ctx, opened); renewErr != nil {
				return fmt.Errorf("game %s seat %d's stream: %w (then %v)", g.id, seat, err, renewErr)
			}
			e.resumes.Add(1)
			continue
		}
		if !retryable(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("game %s seat %d's stream: %w", g.id, seat, err)
		}
		g.away(address)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(resumeAfter):
		}
		e.resumes.Add(1)
	}
}

// load is the tables' shared state: where to send calls, what to play, and the actions acknowledged.
type load struct {
	engines *engines
	variant string
	players []string
	seats   []context.Context // each seat's context, carrying its bearer token
	acked   atomic.Int64
}

// table plays one game after another; it returns only on a failure.
func (l *load) table() error {
	for {
		g := &game{id: fmt.Sprintf("%016x", rand.Uint64())}
		request := &pb.CreateGameRequest{GameId: g.id, Variant: l.variant, PlayerIds: l.players}
		err := l.engines.call(l.seats[0], g, func(ctx context.Context, api pb.GameServiceClient, option grpc.CallOption) error {
			_, err := api.CreateGame(ctx, request, option)
			return err
		})
		if err != nil {
			return fmt.Errorf("CreateGame %s: %w", g.id, err)
		}
		played := make(chan error, len(l.seats))
		for seat := range l.seats {
			go func() { played <- l.seat(g, seat) }()
		}
		for range l.seats {
			if err := <-played; err != nil {
				return err
			}
		}
	}
}

// seat follows its stream and sends a random one of the legal actions an update lists, once per seq;
// FAILED_PRECONDITION (the game moved on meanwhile) is skipped: the next update says what now.
func (l *load) seat(g *game, seat int) error {
	ctx := l.seats[seat]
	var actedAt uint64
	return l.engines.follow(ctx, g, seat, func(update *pb.GameUpdate) (bool, error) {
		if update.View.GetPhase() == pb.Phase_PHASE_GAME_OVER {
			return true, nil
		}
		if len(update.LegalActions) == 0 || update.Seq <= actedAt {
			return false, nil
		}
		actedAt = update.Seq
		request := &pb.SubmitActionRequest{
			GameId:    g.id,
			Seat:      uint32(seat),
			CommandId: fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64()), // the same on every retry
			Action:    update.LegalActions[rand.IntN(len(update.LegalActions))],
		}
		err := l.engines.call(ctx, g, func(ctx context.Context, api pb.GameServiceClient, option grpc.CallOption) error {
			_, err := api.SubmitAction(ctx, request, option)
			return err
		})
		if status.Code(err) == codes.FailedPrecondition {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("SubmitAction game %s seat %d: %w", g.id, seat, err)
		}
		l.acked.Add(1)
		return false, nil
	})
}
