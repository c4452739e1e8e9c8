package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	pb "github.com/meldstream/meldstream/clients/go/gen/gamev1"
)

type report struct {
	lines, failures   []string
	deals, reshuffles int
}

func (r *report) check(ok bool, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	if ok {
		r.lines = append(r.lines, "ok     "+line)
	} else {
		r.failures = append(r.failures, line)
	}
}

// verify re-derives the game's deals from the revealed seed (docs/shuffle.md) and checks them against
// what each seat was shown while playing, then every deck and reshuffle of the history.
func verify(ctx context.Context, t *table, game *played) *report {
	r := &report{}
	final, err := game.seats[0].last()
	if err != nil || final == nil {
		r.check(false, "seat 0's stream: %v", err)
		return r
	}
	seed, commitment := final.View.Seed, final.View.SeedCommitment
	digest := sha256.Sum256(seed)
	r.check(len(seed) >= 16 && hex.EncodeToString(digest[:]) == commitment,
		"seed %x hashes to the commitment %s published at the start", seed, commitment)
	players := len(game.seats)
	shape, err := shapeFor(game.variant, players, game.options)
	if err != nil {
		r.check(false, "%v", err)
		return r
	}
	history, err := t.api.GetHistory(t.as(ctx, 0), &pb.GetHistoryRequest{GameId: game.id})
	if err != nil {
		r.check(false, "GetHistory: %v", err)
		return r
	}
	// This client sends no seed of its own, but other seats may have: every shuffle then uses the
	// shuffle seed S (docs/shuffle.md §1.1).
	seats := make([][]byte, players)
	for _, entry := range history.Entries {
		if sent := entry.Event.GetSeedContributed(); sent != nil && int(sent.Seat) < players {
			seats[sent.Seat] = sent.Seed
		}
	}
	seed = shuffleSeed(seed, seats)
	deck := func(deal uint32) []string {
		return shuffle(unshuffledDeck(shape.packs, shape.jokers), dealKey(seed, deal))
	}
	seatDeals := make([]int, players)
	for seat, view := range game.seats {
		seatDeals[seat] = checkSeat(r, seat, view.updates, shape, deck)
	}
	firstDealer := func(seq uint64, dealer uint32) {
		if _, fixed := game.options["first_dealer"]; !fixed {
			dealerDigest := sha256.Sum256(append(append([]byte(nil), seed...), "/dealer"...))
			want := binary.BigEndian.Uint64(dealerDigest[:8]) % uint64(players)
			r.check(uint64(dealer) == want, "history seq %d: the first dealer is seat %d", seq, want)
		}
	}
	reshuffles, opened := uint32(0), false
	for _, entry := range history.Entries {
		event := entry.Event
		switch {
		case event.GetGameStarted() != nil && len(event.GetGameStarted().Deck) > 0:
			started := event.GetGameStarted()
			r.deals++
			opened = true
			r.check(slices.Equal(texts(started.Deck), deck(1)), "history seq %d: deal 1's deck is shuffle(deck, S/deal/1)", event.Seq)
			firstDealer(event.Seq, started.Dealer)
		case event.GetDealStarted() != nil && !opened: // the first deal, after the seats' seeds
			started := event.GetDealStarted()
			r.deals++
			opened = true
			r.check(slices.Equal(texts(started.Deck), deck(1)), "history seq %d: deal 1's deck is shuffle(deck, S/deal/1)", event.Seq)
			firstDealer(event.Seq, started.Dealer)
		case event.GetDealStarted() != nil:
			started := event.GetDealStarted()
			r.deals++
			r.check(slices.Equal(texts(started.Deck), deck(started.Deal)),
				"history seq %d: deal %d's deck is shuffle(deck, S/deal/%d)", event.Seq, started.Deal, started.Deal)
		case event.GetStockReshuffled() != nil:
			reshuffles++
			r.reshuffles++
			before, err := t.api.GetStateAt(t.as(ctx, 0), &pb.GetStateAtRequest{GameId: game.id, Seq: event.Seq - 1, Seat: ptr(uint32(0))})
			if err != nil {
				r.check(false, "GetStateAt %d: %v", event.Seq-1, err)
				continue
			}
			pile := texts(before.DiscardPile)
			if !shape.reshuffleWholePile {
				pile = pile[:len(pile)-1]
			}
			r.check(slices.Equal(texts(event.GetStockReshuffled().Cards), shuffle(pile, reshuffleKey(seed, reshuffles))),
				"history seq %d: reshuffle %d is shuffle(pile of %d, S/reshuffle/%d)", event.Seq, reshuffles, len(pile), reshuffles)
		}
	}
	for seat, deals := range seatDeals {
		r.check(deals == r.deals, "seat %d saw %d deal starts, the history has %d", seat, deals, r.deals)
	}
	return r
}

// checkSeat checks one seat's dealt hands, upcards, stock sizes and its own stock draws (until a
// deal's first reshuffle) against the decks the seed gives; it answers the number of deals it saw start.
func checkSeat(r *report, seat int, updates []*pb.GameUpdate, shape deckShape, deck func(uint32) []string) int {
	var cards []string
	var previous *pb.PlayerView
	reshuffled, deals, draws, wrong := false, 0, 0, 0
	for index, update := range updates {
		view := update.View
		waiting := index == 0 && view.Deal == 0 && view.Phase == pb.Phase_PHASE_DEAL_OVER // for the seats' seeds
		if (index == 0 && !waiting) || update.EventType == "deal_started" {
			key := view.Deal // the first deal's key is 1 whatever its number (contract first_round)
			if deals == 0 {
				key = 1
			}
			cards, reshuffled = deck(key), false
			deals++
			order := dealOrder(view.Active, int(view.Dealer))
			position := slices.Index(order, seat)
			var hand []string
			for k := range shape.handSize {
				hand = append(hand, cards[position+k*len(order)])
			}
			dealt := shape.handSize * len(order)
			r.check(slices.Equal(sortedCopy(texts(view.Hand)), sortedCopy(hand)),
				"seat %d, seq %d: the hand dealt in deal %d is deck positions %d, %d, ... (%s)",
				seat, update.Seq, view.Deal, position, position+len(order), strings.Join(hand, " "))
			upcard := 0
			if shape.upcard {
				upcard = 1
				r.check(cardText(view.DiscardTop) == cards[dealt], "seat %d, seq %d: the upcard is deck position %d (%s)",
					seat, update.Seq, dealt, cards[dealt])
			}
			r.check(int(view.StockSize) == len(cards)-dealt-upcard, "seat %d, seq %d: %d cards left in the stock", seat, update.Seq, view.StockSize)
		} else if update.EventType == "stock_reshuffled" {
			reshuffled = true
		} else if update.EventType == "card_drawn" && update.Actor != nil && int(*update.Actor) == seat &&
			!reshuffled && previous != nil && previous.StockSize == view.StockSize+1 {
			drawn := added(texts(previous.Hand), texts(view.Hand))
			want := cards[len(cards)-int(previous.StockSize)]
			draws++
			if len(drawn) != 1 || drawn[0] != want {
				wrong++
				r.check(false, "seat %d, seq %d: drew %v from a stock of %d, the deck's position %d is %s",
					seat, update.Seq, drawn, previous.StockSize, len(cards)-int(previous.StockSize), want)
			}
		}
		previous = view
	}
	r.check(wrong == 0, "seat %d: %d of %d draws from the stock were the deck's next card", seat, draws-wrong, draws)
	return deals
}

// added is what `after` holds beyond `before`, as multisets.
func added(before, after []string) []string {
	left := map[string]int{}
	for _, card := range before {
		left[card]++
	}
	var out []string
	for _, card := range after {
		if left[card] > 0 {
			left[card]--
		} else {
			out = append(out, card)
		}
	}
	return out
}
