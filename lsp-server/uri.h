/*
 * uri.h: file:// URIs <-> paths, and the workspace trust check.
 */
#ifndef AKG_LSP_URI_H
#define AKG_LSP_URI_H

#include <stddef.h>

/* The absolute path of a file:// URI, percent-decoded and normalised, as a
 * malloc'd string the caller frees; NULL for other schemes or bad escapes. */
char *akg_lsp_uri_to_path(const char *uri);
/* The file:// URI of an absolute path, percent-encoded; malloc'd, the caller
 * frees it. */
char *akg_lsp_path_to_uri(const char *path);
/* 1 when path (absolute, normalised) is folder or lies below it. */
int akg_lsp_path_within(const char *path, const char *folder);
/* 1 when s ends with suffix. */
int akg_lsp_ends_with(const char *s, const char *suffix);

#endif
