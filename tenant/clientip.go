package tenant

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/labstack/echo/v4"
)

// Proxies are the trusted proxies (the --trusted-proxies setting): only a request whose TCP
// peer is one of them has its X-Forwarded-* headers believed, since without a proxy in front
// any client can write them. Loopback and private networks are trusted only when listed.
type Proxies []netip.Prefix

// ParseProxies reads trusted proxies written as CIDRs or single addresses.
func ParseProxies(list []string) (Proxies, error) {
	var ps Proxies
	for _, s := range list {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q: want a CIDR or an address", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		ps = append(ps, p.Masked())
	}
	return ps, nil
}

// ClientIP returns the extractor that names the client of a request for limits and logs: the
// TCP peer, or, when the peer is one of the proxies, the nearest address in X-Forwarded-For
// that is not.
func (ps Proxies) ClientIP() echo.IPExtractor {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, p := range ps {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}

// trusts reports whether r's TCP peer is one of the proxies.
func (ps Proxies) trusts(r *http.Request) bool {
	if len(ps) == 0 {
		return false
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	a := ap.Addr().Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// baseURL is the address (scheme, host and path prefix) r reached the project at, which the
// addresses answered to it (File.url) start with: the request's own, or, from a trusted
// proxy, the one its X-Forwarded-Proto, -Host and -Prefix say it received. The path form
// (ProjectPaths) adds /p/<project> on the apex host it was sent to.
func (ps Proxies) baseURL(r *http.Request) string {
	scheme, host, prefix := "http", r.Host, ""
	if r.TLS != nil {
		scheme = "https"
	}
	if pf, ok := r.Context().Value(pathFormKey{}).(pathForm); ok {
		host, prefix = pf.host, pf.prefix
	}
	if ps.trusts(r) {
		// A proxy that is itself behind another appends: the first value is the client's.
		first := func(h string) string {
			v, _, _ := strings.Cut(r.Header.Get(h), ",")
			return strings.TrimSpace(v)
		}
		if p := strings.ToLower(first("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := first("X-Forwarded-Host"); h != "" {
			host = h
		}
		prefix = strings.TrimSuffix(first("X-Forwarded-Prefix"), "/") + prefix
	}
	return scheme + "://" + host + prefix
}

// clientOf names the client of c's request with the server's IPExtractor (ClientIP's, as
// platform serve sets it), or the TCP peer when none is set: Echo's own default would
// believe any X-Forwarded-For.
func clientOf(c echo.Context) string {
	if c.Echo().IPExtractor != nil {
		return c.RealIP()
	}
	return peerIP(c.Request())
}
