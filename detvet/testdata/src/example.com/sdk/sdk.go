// Package sdk stands in for an LLM SDK in detvet's corpus.
package sdk

import "context"

type Metadata struct{ UserID string }

type MessageParams struct {
	Model    string
	Prompt   string
	Metadata Metadata
}

type Message struct{ Text string }

type Client struct{}

func (c *Client) New(ctx context.Context, p MessageParams) (*Message, error) { return &Message{}, nil }
