package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// newHealthcheckCmd probes a local `serve`: container images without a shell (distroless)
// run it as their HEALTHCHECK.
func newHealthcheckCmd() *cobra.Command {
	var addr, path string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when the local serve answers its health check, 1 otherwise",
		Args:  cobra.NoArgs,
	}
	envErr := bindAll(cmd.Flags(), []setting{
		stringSetting(&addr, "addr", "PLATFORM_ADDR", ":8080", "the address serve listens on"),
		durationSetting(&timeout, "timeout", "", 3*time.Second, "time the check may take"),
	})
	cmd.Flags().StringVar(&path, "path", "/healthz", "/healthz (the process is alive) or /readyz (its stores answer)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if envErr != nil {
			return envErr
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("address %q: %w", addr, err)
		}
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = "127.0.0.1"
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
		defer cancel()
		url := "http://" + net.JoinHostPort(host, port) + path
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fmt.Errorf("health check %s: %w", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("health check %s: %s: %s", url, resp.Status, body)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s\n", body)
		return nil
	}
	return cmd
}
