package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

var epoch = time.Unix(1_800_000_000, 0)

func TestRenewalIsDueAtHalfLife(t *testing.T) {
	for _, life := range []time.Duration{10 * time.Second, 10 * time.Minute} {
		g := grant{token: "t", received: epoch, expires: epoch.Add(life)}
		if due := renewalDue(g); !due.Equal(epoch.Add(life / 2)) {
			t.Errorf("a token of %v: renewal due %v after receipt, want %v", life, due.Sub(epoch), life/2)
		}
	}
	// Received late in its life (identity's clock ahead, a slow answer): still half of what is left.
	g := grant{token: "t", received: epoch, expires: epoch.Add(4 * time.Second)}
	if due := renewalDue(g); !due.Equal(epoch.Add(2 * time.Second)) {
		t.Errorf("renewal due %v after receipt, want 2s", due.Sub(epoch))
	}
	if due := renewalDue(grant{}); due.After(time.Now()) {
		t.Errorf("no token yet: renewal due at once, got %v", due)
	}
}

func TestATokenIsSentUntilItsEarlyMargin(t *testing.T) {
	long := grant{token: "t", received: epoch, expires: epoch.Add(10 * time.Minute)}
	short := grant{token: "t", received: epoch, expires: epoch.Add(10 * time.Second)}
	cases := []struct {
		name string
		g    grant
		at   time.Duration
		want bool
	}{
		{"a fresh token", long, 0, true},
		{"past half-life (the background renews it)", long, 6 * time.Minute, true},
		{"just outside 5 s of its expiry", long, 10*time.Minute - 5*time.Second - time.Millisecond, true},
		{"5 s before its expiry", long, 10*time.Minute - 5*time.Second, false},
		{"expired", long, 11 * time.Minute, false},
		{"a 10 s token, 3 s before expiry (margin 2.5 s)", short, 7 * time.Second, true},
		{"a 10 s token, 2.5 s before expiry", short, 7500 * time.Millisecond, false},
		{"no token", grant{}, 0, false},
	}
	for _, c := range cases {
		if got := usable(c.g, epoch.Add(c.at)); got != c.want {
			t.Errorf("%s: usable = %v, want %v", c.name, got, c.want)
		}
	}
}

func jws(payload string) string {
	part := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	return part(`{"alg":"EdDSA","kid":"k1","typ":"at+jwt"}`) + "." + part(payload) + "." + part("signature")
}

func TestExpiryIsReadFromThePayloadUnverified(t *testing.T) {
	expires, err := tokenExpiry(jws(`{"sub":"a1","exp":1800000600,"scope":"play"}`))
	if err != nil || !expires.Equal(epoch.Add(10*time.Minute)) {
		t.Fatalf("exp = %v, %v; want %v", expires, err, epoch.Add(10*time.Minute))
	}
	for _, bad := range []string{"opaque", "a.b", jws(`{"sub":"a1"}`), jws(`not json`), jws(`{"exp":"soon"}`), "a.!!!.c"} {
		if _, err := tokenExpiry(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// access_expires_at wins; the payload's exp only when identity sent none.
	g, err := grantOf(jws(`{"exp":1800000600}`), 1_800_000_300, epoch)
	if err != nil || !g.expires.Equal(epoch.Add(5*time.Minute)) {
		t.Errorf("grant expires %v, %v; want access_expires_at", g.expires, err)
	}
	g, err = grantOf(jws(`{"exp":1800000600}`), 0, epoch)
	if err != nil || !g.expires.Equal(epoch.Add(10*time.Minute)) {
		t.Errorf("grant expires %v, %v; want exp", g.expires, err)
	}
}

// issuer is a fake identity: each fetch answers a new token living `life`, after `delay`.
type issuer struct {
	life, delay time.Duration
	fetches     atomic.Int64
	mu          sync.Mutex
	expiries    map[string]time.Time
}

func (i *issuer) fetch(ctx context.Context) (grant, error) {
	time.Sleep(i.delay)
	n := i.fetches.Add(1)
	now := time.Now()
	g := grant{token: fmt.Sprintf("token-%d", n), received: now, expires: now.Add(i.life)}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.expiries == nil {
		i.expiries = map[string]time.Time{}
	}
	i.expiries[g.token] = g.expires
	return g, nil
}

func (i *issuer) expiry(token string) time.Time {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.expiries[token]
}

// Over several lifetimes, calls made all along are always given a live token, and the background
// renews about twice a lifetime: neither per call nor only once a token has lapsed.
func TestTheBackgroundRenewsBeforeExpiry(t *testing.T) {
	fake := &issuer{life: 400 * time.Millisecond, delay: 5 * time.Millisecond}
	r := renewing("test", fake.fetch)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := r.token(ctx); err != nil {
		t.Fatal(err)
	}
	go r.keep(ctx)
	end := time.Now().Add(2 * time.Second) // five lifetimes
	calls := 0
	for time.Now().Before(end) {
		token, err := r.token(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if left := time.Until(fake.expiry(token)); left <= 0 {
			t.Fatalf("call %d was given %s, expired %v ago", calls, token, -left)
		}
		calls++
		time.Sleep(3 * time.Millisecond)
	}
	// One fetch at the start, then one every 200 ms: ~11. Fewer than 7 would let tokens lapse.
	if n := fake.fetches.Load(); n < 7 || n > 16 {
		t.Errorf("%d fetches for %d calls over 5 lifetimes of 400 ms, want about 11", n, calls)
	}
	if r.renewals.Load() != fake.fetches.Load() {
		t.Errorf("renewals counted %d, fetches %d", r.renewals.Load(), fake.fetches.Load())
	}
}

// Calls refused token_expired together renew once: the first fetch, which the others wait for.
func TestCallsRefusedTogetherRenewOnce(t *testing.T) {
	fake := &issuer{life: time.Minute, delay: 50 * time.Millisecond}
	r := renewing("test", fake.fetch)
	began := time.Now()
	var wg sync.WaitGroup
	tokens := make([]string, 10)
	for i := range tokens {
		wg.Go(func() {
			token, err := r.renewedSince(context.Background(), began)
			if err != nil {
				t.Error(err)
			}
			tokens[i] = token
		})
	}
	wg.Wait()
	if n := fake.fetches.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
	// A call that began before the renewal is given that token again; one begun after it, a new one.
	if token, _ := r.renewedSince(context.Background(), began); token != tokens[0] || token != "token-1" {
		t.Errorf("renewedSince(before) = %q, want token-1", token)
	}
	if token, _ := r.renewedSince(context.Background(), time.Now()); token != "token-2" {
		t.Errorf("renewedSince(after) = %q, want token-2", token)
	}
}

func TestARefusedCallIsRenewedAndSentOnce(t *testing.T) {
	expired := status.Error(codes.Unauthenticated, "token_expired: token expired 3 s ago: refresh it (or sign in again)")
	for _, c := range []struct {
		name     string
		r        *renewer
		answers  []error
		wantSent int
		wantErr  bool
	}{
		{"renewed, then accepted", renewing("test", (&issuer{life: time.Minute}).fetch), []error{expired, nil}, 2, false},
		{"refused twice: given up", renewing("test", (&issuer{life: time.Minute}).fetch), []error{expired, expired}, 2, true},
		{"a static token: not sent again", staticToken("test", "static"), []error{expired, nil}, 1, true},
		{"another refusal: not sent again", renewing("test", (&issuer{life: time.Minute}).fetch),
			[]error{status.Error(codes.Unauthenticated, "unauthenticated: invalid token"), nil}, 1, true},
	} {
		sent := 0
		invoker := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			sent++
			return c.answers[sent-1]
		}
		err := renewOnExpiry(as(context.Background(), c.r), "/m", nil, nil, nil, invoker)
		if sent != c.wantSent || (err != nil) != c.wantErr {
			t.Errorf("%s: sent %d times (want %d), error %v", c.name, sent, c.wantSent, err)
		}
	}
}

func TestRefusalsArePrintedQuotedAndCut(t *testing.T) {
	echoed := "token_revoked: unknown token " + strings.Repeat("x", 300) + "\x1b[2J"
	err := fmt.Errorf("ExchangeApiToken: %w", status.Error(codes.Unauthenticated, echoed))
	text := describe(err)
	if !strings.HasPrefix(text, `ExchangeApiToken: UNAUTHENTICATED "token_revoked: unknown token xxx`) || !strings.HasSuffix(text, `"…`) {
		t.Errorf("describe = %s", text)
	}
	if strings.Contains(text, "\x1b") || len(text) > quotedChars+60 {
		t.Errorf("describe kept a control character or the whole message: %q", text)
	}
	if got := describe(fmt.Errorf("plain")); got != "plain" {
		t.Errorf("describe(plain) = %q", got)
	}
	if !isExpired(fmt.Errorf("GetView: %w", status.Error(codes.Unauthenticated, "token_expired: ..."))) {
		t.Error("a wrapped token_expired refusal is not seen as one")
	}
}
