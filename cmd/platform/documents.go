package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/platform-dev/platform/tenant"
)

// persistedConfig bounds persisted documents (tenant.PersistedOptions).
type persistedConfig struct {
	APQTTL           time.Duration
	APQMax           int
	MaxDocuments     int
	MaxManifestBytes int
}

func (c *persistedConfig) settings() []setting {
	return []setting{
		durationSetting(&c.APQTTL, "apq-ttl", "PLATFORM_APQ_TTL", tenant.DefaultAPQTTL, "how long a document a client sent with its hash (automatic persisted queries) is kept after it was last sent in full; a client sending the hash after that is answered PERSISTED_QUERY_NOT_FOUND and sends the document again"),
		intSetting(&c.APQMax, "apq-max", "PLATFORM_APQ_MAX", tenant.DefaultAPQMax, "documents sent by hash one project keeps, across replicas (in Redis); past it the oldest are forgotten"),
		intSetting(&c.MaxDocuments, "documents-max", "PLATFORM_DOCUMENTS_MAX", tenant.DefaultMaxDocuments, "documents one project may register (platform documents -f; 400 past it)"),
		intSetting(&c.MaxManifestBytes, "documents-max-bytes", "PLATFORM_DOCUMENTS_MAX_BYTES", tenant.DefaultMaxManifestBytes, "largest manifest of registered documents, in bytes (413 past it)"),
	}
}

func (c persistedConfig) options() tenant.PersistedOptions {
	return tenant.PersistedOptions{APQTTL: c.APQTTL, APQMax: int64(c.APQMax), MaxDocuments: c.MaxDocuments, MaxManifestBytes: int64(c.MaxManifestBytes)}
}

func newDocumentsCmd() *cobra.Command {
	var file string
	var only, remove bool
	cmd, _ := projectAdminCmd("documents --project ID [-f persisted-documents.json [--registered-only] | --remove]",
		"Show, register or remove a project's registered documents (trusted documents)",
		func(cmd *cobra.Command, cfg applyConfig, project string) error {
			path := "/admin/v1/projects/" + url.PathEscape(project) + "/documents"
			var rep tenant.ManifestReport
			var err error
			switch {
			case remove:
				err = adminCall(cmd.Context(), cfg, "documents", http.MethodDelete, path, nil, &rep)
			case file != "":
				m := tenant.Manifest{RegisteredOnly: only}
				raw, rerr := os.ReadFile(file)
				if rerr != nil {
					return rerr
				}
				if jerr := json.Unmarshal(raw, &m.Documents); jerr != nil {
					return fmt.Errorf("%s: want GraphQL Code Generator's persisted documents, a JSON object of SHA-256 hashes to documents: %w", file, jerr)
				}
				body, _ := json.Marshal(m) // strings always encode
				err = adminCall(cmd.Context(), cfg, "documents", http.MethodPut, path, body, &rep)
			default:
				err = adminCall(cmd.Context(), cfg, "documents", http.MethodGet, path, nil, &rep)
			}
			if err != nil {
				return err
			}
			mode := "any document runs"
			if rep.RegisteredOnly {
				mode = "registered documents only"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project %s: %d registered documents; %s\n", rep.Project, rep.Documents, mode)
			for _, h := range rep.Hashes {
				fmt.Fprintf(cmd.OutOrStdout(), "  %s\n", h)
			}
			return nil
		})
	cmd.Long = "Register the documents a project's clients send (GraphQL Code Generator's persisted-documents.json, " +
		"generated with hashAlgorithm sha256): clients may then send a document's hash alone " +
		"(extensions.persistedQuery.sha256Hash or documentId). With --registered-only the project refuses every other " +
		"document (PERSISTED_QUERY_ONLY). Registering replaces the project's documents; --remove removes them all."
	cmd.Flags().StringVarP(&file, "file", "f", "", "the manifest: a JSON object of SHA-256 hashes to documents")
	cmd.Flags().BoolVar(&only, "registered-only", false, "refuse every document that is not registered")
	cmd.Flags().BoolVar(&remove, "remove", false, "remove the project's registered documents")
	return cmd
}
