package main

// Access tokens that stay fresh, as the Python SDK's RenewingToken does (libs/rummy_client, identity.py;
// docs/clients/auth.md#accounts-and-access-tokens): a renewer holds one player's long-lived credential
// (a personal API token, exchanged with ExchangeApiToken, or a session's refresh token, with Refresh)
// and the access token it last got for it. A goroutine fetches the next one once half of the token's
// life has passed, so no call waits for identity; a call that finds the token within its early margin
// of expiry (a machine woken from sleep, identity away at half-life) renews in line first; a call
// refused UNAUTHENTICATED token_expired anyway is renewed once and sent again (renewOnExpiry). A
// static token (-tokens) is sent as it is until the engine refuses it.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	idpb "github.com/meldstream/meldstream/clients/go/gen/identityv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

const (
	earlyMargin     = 5 * time.Second // an access token this close to its expiry is renewed before it is sent
	identityTimeout = 10 * time.Second
	firstBackoff    = time.Second // between background renewals that failed, doubling up to lastBackoff
	lastBackoff     = 30 * time.Second
	tokenExpired    = "token_expired" // the reason an expired token is refused with (its message's start)
	quotedChars     = 120             // of a message a refusal echoes: at most this many characters
)

// retryUnavailable is the identity connection's service config: UNAVAILABLE (an account's partition
// without an owner for a moment, identity restarting) is tried again a few times.
const retryUnavailable = `{"methodConfig": [{"name": [{"service": "rummy.identity.v1.IdentityService"}],
  "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.2s", "maxBackoff": "2s",
    "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`

// grant is an access token, when it expires, and when it was received (its life as this client sees it).
type grant struct {
	token    string
	expires  time.Time
	received time.Time
}

// renewalDue is when the background renewal of g is due: half of its life after it was received.
func renewalDue(g grant) time.Time {
	return g.received.Add(g.expires.Sub(g.received) / 2)
}

// usable says whether g may still be sent at now: not within its early margin of its expiry (the
// margin is a quarter of its life when that is shorter, so a short-lived token is not renewed per call).
func usable(g grant, now time.Time) bool {
	if g.token == "" {
		return false
	}
	margin := min(earlyMargin, g.expires.Sub(g.received)/4)
	return now.Before(g.expires.Add(-margin))
}

// tokenExpiry reads a JWS's exp claim without verifying it (the services verify; a client only needs
// to know when to renew).
func tokenExpiry(token string) (time.Time, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return time.Time{}, errors.New("not a compact JWS (three dot-separated parts)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return time.Time{}, fmt.Errorf("its payload is not base64url: %w", err)
	}
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := json.Unmarshal(payload, &claims); err != nil {
		return time.Time{}, fmt.Errorf("its payload is not JSON: %w", err)
	}
	if claims.Exp == nil {
		return time.Time{}, errors.New("its payload has no exp")
	}
	seconds, err := claims.Exp.Float64()
	if err != nil {
		return time.Time{}, fmt.Errorf("its exp is not a number: %w", err)
	}
	return time.Unix(int64(seconds), 0), nil
}

// grantOf is an access token as identity answered it: its expiry from access_expires_at, else from exp.
func grantOf(token string, expiresAt int64, now time.Time) (grant, error) {
	expires := time.Unix(expiresAt, 0)
	if expiresAt == 0 {
		var err error
		if expires, err = tokenExpiry(token); err != nil {
			return grant{}, fmt.Errorf("identity answered an access token without access_expires_at, and %w", err)
		}
	}
	return grant{token: token, expires: expires, received: now}, nil
}

type fetchFunc func(ctx context.Context) (grant, error)

// flight is one fetch in progress, whose result every caller waiting for it gets.
type flight struct {
	done chan struct{}
	got  grant
	err  error
}

// renewer is one player's access token (see the top of the file). It is the calls' PerRPCCredentials.
type renewer struct {
	who      string    // what the credential is, for messages: never the secret
	fetch    fetchFunc // nil for a static token
	now      func() time.Time
	mu       sync.Mutex
	current  grant
	flight   *flight
	renewals atomic.Int64 // access tokens fetched
}

func staticToken(who, token string) *renewer {
	return &renewer{who: who, now: time.Now, current: grant{token: token}}
}

func renewing(who string, fetch fetchFunc) *renewer {
	return &renewer{who: who, fetch: fetch, now: time.Now}
}

func (r *renewer) renews() bool { return r.fetch != nil }

// token is the access token to send now, renewed in line first when it is not usable any more.
func (r *renewer) token(ctx context.Context) (string, error) {
	r.mu.Lock()
	held := r.current
	r.mu.Unlock()
	if !r.renews() || usable(held, r.now()) {
		return held.token, nil
	}
	got, err := r.renew(ctx)
	return got.token, err
}

// renewedSince is the access token to send again after a call that began at began was refused
// token_expired: one received since then (another call renewed it meanwhile), else a new one.
func (r *renewer) renewedSince(ctx context.Context, began time.Time) (string, error) {
	if !r.renews() {
		return "", fmt.Errorf("%s has expired and is not renewed: pass -api-tokens or -refresh-tokens instead", r.who)
	}
	r.mu.Lock()
	held := r.current
	r.mu.Unlock()
	if held.received.After(began) && usable(held, r.now()) {
		return held.token, nil
	}
	got, err := r.renew(ctx)
	return got.token, err
}

// renew fetches the next access token: one fetch at a time, which every caller meanwhile waits for.
func (r *renewer) renew(ctx context.Context) (grant, error) {
	r.mu.Lock()
	f := r.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		r.flight = f
		go func() {
			asked, cancel := context.WithTimeout(context.Background(), identityTimeout)
			got, err := r.fetch(asked)
			cancel()
			if err != nil {
				err = fmt.Errorf("renewing %s: %s", r.who, describe(err))
			}
			r.mu.Lock()
			if err == nil {
				r.current = got
				r.renewals.Add(1)
			}
			r.flight = nil
			r.mu.Unlock()
			f.got, f.err = got, err
			close(f.done)
		}()
	}
	r.mu.Unlock()
	select {
	case <-f.done:
		return f.got, f.err
	case <-ctx.Done():
		return grant{}, ctx.Err()
	}
}

// keep renews the token in the background at half of its life until ctx ends; a renewal that fails
// is reported on stderr and tried again after a backoff (the token in hand may still be good).
func (r *renewer) keep(ctx context.Context) {
	backoff := firstBackoff
	for {
		r.mu.Lock()
		due := renewalDue(r.current)
		r.mu.Unlock()
		if sleep(ctx, due.Sub(r.now())) != nil {
			return
		}
		if _, err := r.renew(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintf(os.Stderr, "meldstream-go: %v (again in %v)\n", err, backoff)
			if sleep(ctx, backoff) != nil {
				return
			}
			backoff = min(2*backoff, lastBackoff)
			continue
		}
		backoff = firstBackoff
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// GetRequestMetadata is the bearer token of every call (and every retry of one) the renewer goes with.
func (r *renewer) GetRequestMetadata(ctx context.Context, _ ...string) (map[string]string, error) {
	token, err := r.token(ctx)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, err.Error())
	}
	return map[string]string{"authorization": "Bearer " + token}, nil
}

// RequireTransportSecurity is false: the client speaks plaintext to a local engine, as before.
func (r *renewer) RequireTransportSecurity() bool { return false }

// as is a context whose calls carry r's access token (through the interceptors of withRenewal).
func as(ctx context.Context, r *renewer) context.Context {
	return context.WithValue(ctx, renewerKey{}, r)
}

type renewerKey struct{}

func renewerOf(ctx context.Context) *renewer {
	r, _ := ctx.Value(renewerKey{}).(*renewer)
	return r
}

// isExpired says whether err is a refusal of an expired access token.
func isExpired(err error) bool {
	s, ok := statusOf(err)
	return ok && s.Code() == codes.Unauthenticated && strings.HasPrefix(s.Message(), tokenExpired)
}

// renewOnExpiry sends a unary call with its context's token and, refused token_expired, once more
// with a renewed one.
func renewOnExpiry(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	r := renewerOf(ctx)
	if r == nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	opts = append(opts, grpc.PerRPCCredentials(r))
	began := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	if !isExpired(err) || !r.renews() {
		return err
	}
	if _, renewErr := r.renewedSince(ctx, began); renewErr != nil {
		return fmt.Errorf("%w (then %v)", err, renewErr)
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}

// withToken opens a stream with its context's token; a stream refused token_expired shows it at its
// first Recv, where its caller renews (renewedSince) and opens it again after the last seq it saw.
func withToken(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	if r := renewerOf(ctx); r != nil {
		opts = append(opts, grpc.PerRPCCredentials(r))
	}
	return streamer(ctx, desc, cc, method, opts...)
}

// withRenewal is the dial options of a connection whose calls carry their context's token.
func withRenewal() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(renewOnExpiry), grpc.WithChainStreamInterceptor(withToken)}
}

// credentialFlags are the ways a player's token is given: exactly one of them, one entry per player.
type credentialFlags struct {
	tokens, apiTokens, refreshTokens, identity *string
}

func addCredentialFlags(add func(name, value, usage string) *string) credentialFlags {
	return credentialFlags{
		tokens: add("tokens", "", "one access token per player, same order, comma-separated: sent as they are, never renewed"),
		apiTokens: add("api-tokens", "", "one personal API token per player, comma-separated: "+
			"exchanged at identity (ExchangeApiToken) for access tokens, renewed before they expire"),
		refreshTokens: add("refresh-tokens", "", "one session refresh token per player, comma-separated: "+
			"exchanged at identity (Refresh) for access tokens, renewed before they expire"),
		identity: add("identity", "127.0.0.1:50054", "the identity service's gRPC address (for -api-tokens and -refresh-tokens)"),
	}
}

// credentials are the players' renewers: the first access token of each fetched now (a credential
// identity refuses ends the client here, with identity's answer), renewed in the background until ctx ends.
type credentials struct {
	seats    []*renewer
	distinct []*renewer       // each renewing credential once, in the order of its first seat
	conn     *grpc.ClientConn // to identity; nil for static tokens
}

// check says what is wrong with the flags for this many players (a usage error), if anything.
func (c credentialFlags) check(players int) error {
	given := 0
	for _, value := range []string{*c.tokens, *c.apiTokens, *c.refreshTokens} {
		if value != "" {
			given++
		}
	}
	if given != 1 {
		return errors.New("give the players' tokens with exactly one of -tokens, -api-tokens or -refresh-tokens")
	}
	kind, list := c.kind()
	if secrets := strings.Split(list, ","); len(secrets) != players {
		return fmt.Errorf("%d players but %d %ss", players, len(secrets), kind)
	}
	return nil
}

// kind is what the flags give, and the list given.
func (c credentialFlags) kind() (string, string) {
	switch {
	case *c.apiTokens != "":
		return "API token", *c.apiTokens
	case *c.refreshTokens != "":
		return "refresh token", *c.refreshTokens
	}
	return "access token", *c.tokens
}

func (c credentialFlags) open(ctx context.Context, players int) (*credentials, error) {
	if err := c.check(players); err != nil {
		return nil, err
	}
	kind, list := c.kind()
	secrets := strings.Split(list, ",")
	found := &credentials{}
	if *c.tokens != "" {
		for seat, secret := range secrets {
			found.seats = append(found.seats, staticToken(fmt.Sprintf("seat %d's access token", seat), secret))
		}
		return found, nil
	}
	conn, err := grpc.NewClient(*c.identity, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultServiceConfig(retryUnavailable))
	if err != nil {
		return nil, fmt.Errorf("identity %s: %w", quote(*c.identity), err)
	}
	found.conn = conn
	api := idpb.NewIdentityServiceClient(conn)
	shared := map[string]*renewer{} // seats given one credential (a person and the house bots she plays) share its tokens
	for seat, secret := range secrets {
		if r, ok := shared[secret]; ok {
			found.seats = append(found.seats, r)
			continue
		}
		who := fmt.Sprintf("seat %d's %s at identity %s", seat, kind, *c.identity)
		var fetch fetchFunc
		if *c.apiTokens != "" {
			fetch = func(ctx context.Context) (grant, error) {
				reply, err := api.ExchangeApiToken(ctx, &idpb.ExchangeApiTokenRequest{ApiToken: secret})
				if err != nil {
					return grant{}, fmt.Errorf("ExchangeApiToken: %w", err)
				}
				return grantOf(reply.AccessToken, reply.AccessExpiresAt, time.Now())
			}
		} else {
			// Refresh answers no new refresh token (identity does not rotate them): the one given is kept.
			fetch = func(ctx context.Context) (grant, error) {
				reply, err := api.Refresh(ctx, &idpb.RefreshRequest{RefreshToken: secret})
				if err != nil {
					return grant{}, fmt.Errorf("Refresh: %w", err)
				}
				return grantOf(reply.AccessToken, reply.AccessExpiresAt, time.Now())
			}
		}
		shared[secret] = renewing(who, fetch)
		found.seats = append(found.seats, shared[secret])
		found.distinct = append(found.distinct, shared[secret])
	}
	for _, r := range found.distinct {
		if _, err := r.token(ctx); err != nil {
			found.close()
			return nil, err
		}
		go r.keep(ctx)
	}
	return found, nil
}

func (c *credentials) close() {
	if c.conn != nil {
		_ = c.conn.Close()
	}
}

// summary is how many access tokens identity issued this run, for stderr ("" for static tokens).
func (c *credentials) summary() string {
	if c.conn == nil {
		return ""
	}
	counts := make([]string, len(c.distinct))
	total := int64(0)
	for i, r := range c.distinct {
		counts[i] = strconv.FormatInt(r.renewals.Load(), 10)
		total += r.renewals.Load()
	}
	return fmt.Sprintf("%d access tokens from identity (per credential: %s)", total, strings.Join(counts, ", "))
}

// describe is an error as this client prints it: a gRPC refusal as its code and its message, quoted
// and cut to quotedChars (a refusal may echo what was sent, and a terminal shows it as it is).
func describe(err error) string {
	s, ok := statusOf(err)
	if !ok {
		return err.Error() // the client's own words
	}
	text, prefix := err.Error(), ""
	if i := strings.Index(text, "rpc error:"); i > 0 {
		prefix = text[:i] // what wraps the refusal, e.g. the call's name
	}
	return prefix + codeName(s.Code()) + " " + quote(s.Message())
}

// statusOf is the refusal err is or wraps (status.FromError would fold the wrapping into its message).
func statusOf(err error) (*status.Status, bool) {
	var refusal interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &refusal) || refusal.GRPCStatus() == nil {
		return nil, false
	}
	return refusal.GRPCStatus(), true
}

// codeName is a status code as the docs write it: UNAUTHENTICATED, DEADLINE_EXCEEDED.
func codeName(code codes.Code) string {
	var name strings.Builder
	for i, r := range code.String() {
		if i > 0 && r >= 'A' && r <= 'Z' {
			name.WriteByte('_')
		}
		name.WriteRune(r)
	}
	return strings.ToUpper(name.String())
}

// quote is text as a message shows it: Go-quoted (control characters escaped), at most quotedChars
// characters of it, "…" after a cut.
func quote(text string) string {
	runes := []rune(text)
	if len(runes) <= quotedChars {
		return strconv.Quote(text)
	}
	return strconv.Quote(string(runes[:quotedChars])) + "…"
}
