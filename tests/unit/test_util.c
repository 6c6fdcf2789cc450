/* test_util.c: capped buffers, hashing, paths, YAML settings. */
#include <stdlib.h>
#include <unistd.h>

#include "akg/akg.h"
#include "akg/config.h"
#include "check.h"

int main(void)
{
    char hex[65];
    akg_sha256_hex("", 0, hex);
    CHECK_STR(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    akg_sha256_hex("abc", 3, hex);
    CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *long_msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    akg_sha256_hex(long_msg, strlen(long_msg), hex);
    CHECK_STR(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    akg_buf b;
    akg_buf_init(&b, 8);
    CHECK(akg_buf_puts(&b, "12345678") == AKG_OK);
    CHECK(akg_buf_puts(&b, "9") == AKG_ENOMEM); /* the cap holds, data unchanged */
    CHECK_STR(b.data, "12345678");
    akg_buf_consume(&b, 3);
    CHECK_STR(b.data, "45678");
    akg_buf_free(&b);

    char *p = akg_abspath("/a/b/../c/./d//e");
    CHECK_STR(p, "/a/c/d/e");
    free(p);

    char tmpl[] = "/tmp/akg-util-XXXXXX";
    CHECK(mkdtemp(tmpl) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/c.yaml", tmpl);
    const char *yaml = "log_dir: out\nprofile_settings:\n  run_times: 50\n  warmup_times: 5\n"
                       "flags: [-O3, -fopenmp]\nverbose: true\n";
    CHECK(akg_write_file(path, yaml, strlen(yaml), NULL, 0) == AKG_OK);
    cJSON *cfg = NULL;
    char err[256];
    CHECK(akg_yaml_load(path, &cfg, err, sizeof err) == AKG_OK);
    CHECK_STR(akg_config_string(cfg, "log_dir", NULL), "out");
    CHECK(akg_config_number(cfg, "profile_settings.run_times", 0) == 50);
    CHECK(akg_config_number(cfg, "profile_settings.missing", 7) == 7);
    CHECK(cJSON_GetArraySize(akg_config_get(cfg, "flags")) == 2);
    CHECK(cJSON_IsTrue(akg_config_get(cfg, "verbose")));
    cJSON_Delete(cfg);

    const char *bad = "a: [1, 2\nb: c\n";
    CHECK(akg_write_file(path, bad, strlen(bad), NULL, 0) == AKG_OK);
    CHECK(akg_yaml_load(path, &cfg, err, sizeof err) == AKG_EPARSE);
    CHECK_CONTAINS(err, "c.yaml");
    unlink(path);
    rmdir(tmpl);

    /* the seed config of every backend in the tree loads */
    setenv("AKG_HOME", getenv("AKG_SOURCE_DIR"), 1);
    CHECK(akg_backend_config_load("cpu", "cpp", &cfg, err, sizeof err) == AKG_OK);
    CHECK(akg_config_number(cfg, "max_step", 0) >= 1);
    CHECK_STR(akg_config_string(cfg, "default_workflow", NULL), "default");
    cJSON_Delete(cfg);
    return check_summary();
}
