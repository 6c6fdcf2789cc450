/*
 * akg/sketch_json.h: the JSON form of a checked sketch.
 *
 * The JSON form carries everything the language's semantics need (header
 * declarations, bind items, the body as statement and expression trees), so
 * that a program outside the engine (the harness's sketch interpreter, a
 * differential test) can execute a design without parsing sketch text. The
 * format is documented at the top of engine/sketch/sketch_json.c.
 */
#ifndef AKG_SKETCH_JSON_H
#define AKG_SKETCH_JSON_H

#include <cjson/cJSON.h>

#include "akg/sketch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version written as "version" (bumped on incompatible changes). */
#define AKG_SKETCH_JSON_VERSION 1

/* Builds the JSON form of the sketch. Call it after akg_sketch_check() (the
 * tensors' "loaded"/"stored" flags come from the checker). Returns a new
 * tree owned by the caller (free with cJSON_Delete), or NULL when out of
 * memory. The sketch is only read. */
cJSON *akg_sketch_to_json(const akg_sketch *sketch);

/* `akg_cli sketch json FILE...`: parses and checks each file and prints the
 * JSON form of its (first) sketch on one line of stdout. Diagnostics go to
 * stderr as file:line:col: severity: message. Returns 0, 1 when a file does
 * not parse or check, 2 on usage or I/O errors (out of memory included). */
int akg_sketch_cli_json(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* AKG_SKETCH_JSON_H */
