package tenant

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/labstack/echo/v4"
)

// ClientIP returns the extractor that names the client of a request for limits and logs: the
// TCP peer, or, when the peer is one of the trusted proxies (CIDRs or single addresses), the
// nearest address in X-Forwarded-For that is not. Loopback and private networks are trusted
// only when listed, since without a proxy in front any client can write X-Forwarded-For.
func ClientIP(trustedProxies []string) (echo.IPExtractor, error) {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, s := range trustedProxies {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return nil, fmt.Errorf("trusted proxy %q: want a CIDR or an address", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		p = p.Masked()
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}))
	}
	return echo.ExtractIPFromXFFHeader(opts...), nil
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
