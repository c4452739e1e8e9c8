package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	pb "github.com/meldstream/meldstream/clients/go/gen/gamev1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// table is one connection to the engine and an access token per seat (renewer.go).
type table struct {
	conn  *grpc.ClientConn
	api   pb.GameServiceClient
	seats []*renewer
	pace  time.Duration // the pause before each action
}

// retryRateLimited is the connections' service config: a call refused RESOURCE_EXHAUSTED
// (rate_limited) is sent again after the delay the engine names in grpc-retry-pushback-ms, which
// grpc-go's retry policy honours. Safe for every method: a retried SubmitAction carries its command
// id, and the engine answers a repeat with the first outcome (docs/clients/errors.md).
const retryRateLimited = `{"methodConfig": [{"name": [{"service": "rummy.game.v1.GameService"}],
  "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.05s", "maxBackoff": "1s",
    "backoffMultiplier": 2, "retryableStatusCodes": ["RESOURCE_EXHAUSTED"]}}]}`

func dial(address string, seats []*renewer) (*table, error) {
	options := append(withRenewal(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(retryRateLimited))
	conn, err := grpc.NewClient(address, options...)
	if err != nil {
		return nil, err
	}
	return &table{conn: conn, api: pb.NewGameServiceClient(conn), seats: seats}, nil
}

func (t *table) close() { _ = t.conn.Close() }

// as is a context whose calls carry seat's access token.
func (t *table) as(ctx context.Context, seat int) context.Context { return as(ctx, t.seats[seat]) }

// seen is everything one seat's stream showed, in order.
type seen struct {
	mu      sync.Mutex
	updates []*pb.GameUpdate
	err     error
}

func (s *seen) last() (*pb.GameUpdate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.updates) == 0 {
		return nil, s.err
	}
	return s.updates[len(s.updates)-1], s.err
}

type played struct {
	id      string
	variant string
	options map[string]int64
	seats   []*seen
	actions int
}

// play creates the game, opens every seat's stream, and acts for whichever seat may act until the end.
func (t *table) play(ctx context.Context, id, variant string, players []string, options map[string]int64) (*played, error) {
	request := &pb.CreateGameRequest{GameId: id, Variant: variant, PlayerIds: players, Options: map[string]*pb.OptionValue{}}
	for name, value := range options {
		request.Options[name] = &pb.OptionValue{Value: &pb.OptionValue_IntValue{IntValue: value}}
	}
	created, err := t.api.CreateGame(t.as(ctx, 0), request)
	if err != nil {
		return nil, fmt.Errorf("CreateGame: %w", err)
	}
	game := &played{id: created.GameId, variant: variant, options: options}
	for seat := range players {
		view := &seen{}
		game.seats = append(game.seats, view)
		go t.watch(ctx, game.id, seat, view)
	}
	for seat := range players { // each seat's opening view first: it holds the first deal's hands
		if _, err := waitFor(ctx, game.seats[seat], func(u *pb.GameUpdate) bool { return true }); err != nil {
			return nil, err
		}
	}
	for {
		acted, err := t.step(ctx, game)
		if err != nil {
			return nil, err
		}
		if acted {
			continue
		}
		view, err := t.api.GetView(t.as(ctx, 0), &pb.GetViewRequest{GameId: game.id, Seat: ptr(uint32(0))})
		if err != nil {
			return nil, fmt.Errorf("GetView: %w", err)
		}
		if view.View.Phase == pb.Phase_PHASE_GAME_OVER {
			break
		}
		select { // nobody may act at this instant (a move being applied): ask again shortly
		case <-ctx.Done():
			return nil, fmt.Errorf("the game did not end in time: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	last, err := t.api.GetView(t.as(ctx, 0), &pb.GetViewRequest{GameId: game.id, Seat: ptr(uint32(0))})
	if err != nil {
		return nil, err
	}
	for _, view := range game.seats { // every stream has shown the end
		if _, err := waitFor(ctx, view, func(u *pb.GameUpdate) bool { return u.Seq >= last.View.Seq }); err != nil {
			return nil, err
		}
	}
	return game, nil
}

// step sends one action for the seat to move (contract buys are declined by never asking); false when no seat may act.
func (t *table) step(ctx context.Context, game *played) (bool, error) {
	for seat := range game.seats {
		legal, err := t.api.ListLegalActions(t.as(ctx, seat), &pb.ListLegalActionsRequest{GameId: game.id, Seat: uint32(seat)})
		if err != nil {
			return false, fmt.Errorf("ListLegalActions seat %d: %w", seat, err)
		}
		view, err := t.api.GetView(t.as(ctx, seat), &pb.GetViewRequest{GameId: game.id, Seat: ptr(uint32(seat))})
		if err != nil {
			return false, fmt.Errorf("GetView seat %d: %w", seat, err)
		}
		action := choose(legal.Actions, view.View.Hand)
		if action == nil {
			continue
		}
		if err := sleep(ctx, t.pace); err != nil {
			return false, fmt.Errorf("the game did not end in time: %w", err)
		}
		game.actions++
		_, err = t.api.SubmitAction(t.as(ctx, seat), &pb.SubmitActionRequest{
			GameId: game.id, Seat: uint32(seat), CommandId: fmt.Sprintf("go-%d-%d", seat, game.actions), Action: action,
		})
		if err != nil {
			return false, fmt.Errorf("SubmitAction seat %d %v: %w", seat, action, err)
		}
		return true, nil
	}
	return false, nil
}

// choose prefers what ends a deal: go out, lay melds, lay off, draw from the stock, then discard the
// loneliest card. Buying, passing and joker swaps are never chosen (nothing else may be legal then).
func choose(actions []*pb.Action, hand []*pb.Card) *pb.Action {
	rank := func(a *pb.Action) int {
		switch a.Kind.(type) {
		case *pb.Action_GoOut:
			return 0
		case *pb.Action_LayMelds:
			return 1
		case *pb.Action_LayOff:
			return 2
		case *pb.Action_DrawFromStock:
			return 3
		case *pb.Action_Discard:
			return 4
		case *pb.Action_TakeDiscard, *pb.Action_PickFromPile:
			return 5
		}
		return -1
	}
	var best *pb.Action
	for _, action := range actions {
		r := rank(action)
		if r < 0 {
			continue
		}
		if best == nil || r < rank(best) || (r == 4 && r == rank(best) && loneliness(action, hand) > loneliness(best, hand)) {
			best = action
		}
	}
	return best
}

// loneliness scores a discard: high for a card with no partner of its rank and no neighbour in its suit.
func loneliness(action *pb.Action, hand []*pb.Card) int {
	card := action.GetDiscard().GetCard()
	if card.GetRank() == 0 {
		return -100 // keep jokers
	}
	score := int(card.GetRank())
	for _, other := range hand {
		if other.GetRank() == card.GetRank() && other.GetSuit() != card.GetSuit() {
			score -= 20
		}
		gap := int(other.GetRank()) - int(card.GetRank())
		if other.GetSuit() == card.GetSuit() && (gap == 1 || gap == -1 || gap == 2 || gap == -2) {
			score -= 15
		}
	}
	return score
}

// watch keeps seat's stream open, recording every update, until the game ends or the context does. A
// stream refused token_expired (a token checked as the stream opens) is opened again once, after the
// last seq it showed, with a renewed token.
func (t *table) watch(ctx context.Context, game string, seat int, into *seen) {
	var last uint64
	renewed := false
	for {
		opened := time.Now()
		stream, err := t.api.StreamGame(t.as(ctx, seat), &pb.StreamGameRequest{GameId: game, Seat: uint32(seat), AfterSeq: last})
		for err == nil {
			var message *pb.StreamGameResponse
			message, err = stream.Recv()
			if err == nil {
				into.mu.Lock()
				into.updates = append(into.updates, message.Update)
				into.mu.Unlock()
				last, renewed = max(last, message.Update.Seq), false
				if message.Update.View.Phase == pb.Phase_PHASE_GAME_OVER && message.Update.EventType == "game_ended" {
					return
				}
			}
		}
		if isExpired(err) && !renewed && t.seats[seat].renews() {
			renewed = true
			_, renewErr := t.seats[seat].renewedSince(ctx, opened)
			if renewErr == nil {
				continue
			}
			err = fmt.Errorf("%w (then %v)", err, renewErr)
		}
		if !errors.Is(err, io.EOF) {
			into.mu.Lock()
			into.err = fmt.Errorf("seat %d's stream: %w", seat, err)
			into.mu.Unlock()
		}
		return
	}
}

func waitFor(ctx context.Context, view *seen, done func(*pb.GameUpdate) bool) (*pb.GameUpdate, error) {
	for {
		last, err := view.last()
		if last != nil && done(last) {
			return last, nil
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for a stream: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func ptr[T any](value T) *T { return &value }

// cardText is a card in the notation of docs/shuffle.md ("10S", "JK").
func cardText(card *pb.Card) string {
	if card.GetRank() == 0 {
		return "JK"
	}
	return rankNames[card.GetRank()] + string("?CDHS"[card.GetSuit()])
}

func texts(cards []*pb.Card) []string {
	out := make([]string, len(cards))
	for i, card := range cards {
		out[i] = cardText(card)
	}
	return out
}

func sortedCopy(cards []string) []string {
	out := append([]string(nil), cards...)
	sort.Strings(out)
	return out
}
