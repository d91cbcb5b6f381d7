// Package bedrock reaches Claude through Amazon Bedrock: the Anthropic
// provider (internal/llm/anthropic, its streaming, tool calls, retries and
// errors) with the official SDK's bedrock option, which sends each request
// to InvokeModelWithResponseStream signed with AWS SigV4 and reads the
// answer's event-stream framing. Credentials come from the standard AWS
// chain (environment, profile, SSO, instance or task role); model names are
// mapped to Bedrock's ids (ModelID).
package bedrock

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/bedrock"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/synapse-agent/synapse/internal/llm"
	"github.com/synapse-agent/synapse/internal/llm/anthropic"
)

// Name is the provider name used in settings and errors.
const Name = "bedrock"

// URLVar overrides the endpoint (a VPC endpoint, a gateway or a test
// server); the name is Claude Code's.
const URLVar = "ANTHROPIC_BEDROCK_BASE_URL"

// credentialsHelp says where AWS credentials come from.
const credentialsHelp = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (with AWS_SESSION_TOKEN for temporary ones), " +
	"or AWS_PROFILE for a profile of ~/.aws/config (after `aws configure` or `aws sso login`), " +
	"or AWS_BEARER_TOKEN_BEDROCK for a Bedrock API key; on EC2, ECS or Lambda the instance or task role is used"

// Options configure a Bedrock provider. Every value is explicit (the caller
// resolves the environment and settings.json once); empty ones leave the
// choice to the AWS SDK's default chain, which also reads ~/.aws/config and
// ~/.aws/credentials.
type Options struct {
	Region  string // AWS_REGION (or AWS_DEFAULT_REGION); "" means the profile's
	Profile string // AWS_PROFILE
	// Static credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
	// AWS_SESSION_TOKEN); empty means the default chain.
	AccessKeyID, SecretAccessKey, SessionToken string
	// BearerToken is a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK), sent
	// instead of a SigV4 signature.
	BearerToken string
	// NoIMDS leaves the EC2 instance metadata service out of the chain
	// (AWS_EC2_METADATA_DISABLED=true).
	NoIMDS bool
	// BaseURL replaces https://bedrock-runtime.<region>.amazonaws.com.
	BaseURL string

	HTTPClient   *http.Client // nil means llm.NewHTTPClient(IdleTimeout)
	IdleTimeout  time.Duration
	Retry        *llm.RetryPolicy
	DisableCache bool
}

// New loads the AWS configuration (files and environment; no network) and
// returns the provider. Credentials are fetched when the first request is
// signed; when none are found, that request fails with an llm.ErrAuth error
// saying how to supply them.
func New(ctx context.Context, opts Options) (*anthropic.Provider, error) {
	var lo []func(*config.LoadOptions) error
	if opts.Region != "" {
		lo = append(lo, config.WithRegion(opts.Region))
	}
	if opts.Profile != "" {
		lo = append(lo, config.WithSharedConfigProfile(opts.Profile))
	}
	if opts.AccessKeyID != "" || opts.SecretAccessKey != "" {
		if opts.AccessKeyID == "" || opts.SecretAccessKey == "" {
			missing := "AWS_SECRET_ACCESS_KEY"
			if opts.AccessKeyID == "" {
				missing = "AWS_ACCESS_KEY_ID"
			}
			return nil, fmt.Errorf("bedrock: %s is not set, and an access key needs both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; set it, or unset the other to use AWS_PROFILE or the instance role", missing)
		}
		lo = append(lo, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretAccessKey, opts.SessionToken)))
	}
	if opts.NoIMDS {
		lo = append(lo, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, lo...)
	if err != nil {
		if opts.Profile != "" {
			return nil, fmt.Errorf("bedrock: cannot load the AWS profile %q (AWS_PROFILE): %w; check ~/.aws/config and ~/.aws/credentials, or unset AWS_PROFILE", opts.Profile, err)
		}
		return nil, fmt.Errorf("bedrock: cannot load the AWS configuration: %w; check ~/.aws/config and ~/.aws/credentials", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("the bedrock provider (Amazon Bedrock) needs an AWS region: set AWS_REGION (for example us-east-1), or give the AWS_PROFILE profile a region in ~/.aws/config")
	}
	if opts.BearerToken != "" {
		cfg.BearerAuthTokenProvider = bedrock.NewStaticBearerTokenProvider(opts.BearerToken)
		cfg.AuthSchemePreference = []string{"httpBearerAuth"}
	}
	cfg.Credentials = checkedCredentials{inner: cfg.Credentials}
	region := cfg.Region
	return anthropic.New(anthropic.Options{
		BaseURL:      opts.BaseURL,
		HTTPClient:   opts.HTTPClient,
		IdleTimeout:  opts.IdleTimeout,
		Retry:        opts.Retry,
		DisableCache: opts.DisableCache,
		Platform: &anthropic.Platform{
			Name:     Name,
			Options:  []option.RequestOption{bedrock.WithConfig(cfg)},
			Endpoint: "https://bedrock-runtime." + region + ".amazonaws.com",
			URLVar:   URLVar,
			Cred:     "the AWS credentials",
			AuthHint: credentialsHelp,
			AccessHint: "check that the AWS account has access to the model in " + region + " (the Bedrock console's model access page; AWS_REGION), " +
				"that the credentials' IAM policy allows bedrock:InvokeModelWithResponseStream, and the model (SYNAPSE_MODEL or --model)",
			Model: func(m string) string { return ModelID(m, region) },
		},
	}), nil
}

// checkedCredentials turns a failure to find credentials into an
// llm.ErrAuth error that says how to supply them (and holds no secret).
type checkedCredentials struct {
	inner aws.CredentialsProvider
}

func (c checkedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	if c.inner == nil {
		return aws.Credentials{}, missingCredentials(errors.New("no credential provider"))
	}
	creds, err := c.inner.Retrieve(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return creds, ctx.Err()
		}
		return creds, missingCredentials(err)
	}
	return creds, nil
}

func missingCredentials(err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrAuth, Provider: Name, Err: err,
		Message: "no AWS credentials found for Amazon Bedrock (" + llm.Excerpt(err.Error()) + ")",
		Hint:    credentialsHelp}
}

// ModelID is Bedrock's id of a model for a region. A Claude name
// ("claude-sonnet-4-5", or dated "claude-sonnet-4-5-20250929") becomes the
// cross-region inference profile of the region's geography
// ("us.anthropic.claude-sonnet-4-5-20250929-v1:0" in us-east-1), which the
// current models require for on-demand use; a region outside the US, EU
// and Asia Pacific gets the model's own id. Anything else — a Bedrock id
// ("global.anthropic.…", "anthropic.…"), an ARN, another vendor's model —
// is sent as it is.
func ModelID(model, region string) string {
	if strings.Contains(model, "anthropic.") || strings.HasPrefix(model, "arn:") {
		return model
	}
	name, date, ok := llm.ClaudeSnapshot(model)
	if !ok {
		return model
	}
	id := "anthropic." + name + "-" + date + "-v1:0"
	switch {
	case strings.HasPrefix(region, "us-gov-"):
		return "us-gov." + id
	case strings.HasPrefix(region, "us-"):
		return "us." + id
	case strings.HasPrefix(region, "eu-"):
		return "eu." + id
	case strings.HasPrefix(region, "ap-"):
		return "apac." + id
	}
	return id
}
