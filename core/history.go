package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	history "github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/store"
)

// The history: conversations searched, filed in folders, archived,
// deleted, exported and imported. What a caller sees is a Visibility
// (workspace.Service.Visibility); a conversation's own rights are who may
// use it, checked by the caller first.

// SearchConversations lists the conversations p selects.
func (s *Service) SearchConversations(ctx context.Context, p *ConversationSearchParams) ([]*ConversationListing, error) {
	return s.st.ConversationSearch(ctx, p)
}

// FileConversation renames, archives or files a conversation in a folder.
func (s *Service) FileConversation(ctx context.Context, p *ConversationFileParams) (*ConversationListing, error) {
	return s.st.ConversationFile(ctx, p)
}

// DeleteConversation deletes conversation id: it is gone for everyone.
func (s *Service) DeleteConversation(ctx context.Context, id uuid.UUID) error {
	return s.st.ConversationDelete(ctx, &ConversationDeleteParams{ID: id})
}

// FileConversations deletes conversations ids (file nil), or files each as
// file says (its ID is set for each): all of them or, on an error, none.
func (s *Service) FileConversations(ctx context.Context, ids []uuid.UUID, file *ConversationFileParams) error {
	return s.st.InTx(ctx, func(q store.Queries) error {
		for _, id := range ids {
			var err error
			if file == nil {
				err = q.ConversationDelete(ctx, &ConversationDeleteParams{ID: id})
			} else {
				p := *file
				p.ID = id
				_, err = q.ConversationFile(ctx, &p)
			}
			if err != nil {
				return fmt.Errorf("conversation %s: %w", id, err)
			}
		}
		return nil
	})
}

// ExportConversation is conversation id as a transcript document.
func (s *Service) ExportConversation(ctx context.Context, id uuid.UUID) (*history.Doc, error) {
	return history.Export(ctx, s.st, id)
}

// ImportConversation makes a conversation of a transcript document.
func (s *Service) ImportConversation(ctx context.Context, p *history.ImportParams) (uuid.UUID, error) {
	return history.Import(ctx, s.st, p)
}

// Folder reads folder id; who may use it is who may use its workspace.
func (s *Service) Folder(ctx context.Context, id uuid.UUID) (*Folder, error) {
	return s.st.FolderGet(ctx, id)
}

// Folders lists the folders of the workspaces v sees.
func (s *Service) Folders(ctx context.Context, v Visibility) ([]*Folder, error) {
	return s.st.FolderList(ctx, v)
}

// CreateFolder makes a folder.
func (s *Service) CreateFolder(ctx context.Context, p *FolderCreateParams) (*Folder, error) {
	return s.st.FolderCreate(ctx, p)
}

// UpdateFolder renames or recolours a folder.
func (s *Service) UpdateFolder(ctx context.Context, p *FolderUpdateParams) (*Folder, error) {
	return s.st.FolderUpdate(ctx, p)
}

// DeleteFolder deletes folder id; its conversations stay, unfiled.
func (s *Service) DeleteFolder(ctx context.Context, id uuid.UUID) error {
	return s.st.FolderDelete(ctx, id)
}
