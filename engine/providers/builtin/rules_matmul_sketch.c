/*
 * rules_matmul_sketch.c: the sketches of the matmul family (the designs the
 * matmul rules choose), complete and bound to the task.
 *
 * GEMM: the GotoBLAS panels, stated in the sketch. For each NC-column block of C
 * and each group of balanced K slices (KS = K split evenly in ceil(K / KC) parts;
 * a group is as many slices as BG floats of panels hold), B is packed once by the
 * threads together into NR-column panels ([slices, NC/NR, KS, NR], k-major inside a
 * panel, so a micro-kernel reads one contiguous row of NR per k) that all threads
 * share. The work is then cut into items, a balanced MB-row block (rounded up to
 * MR) times a share of NS columns (a multiple of NR, at least IT items per block),
 * that the threads take as they come free (a `dynamic` parallel loop: a thread
 * slowed by other work takes fewer, and the items of a triangle, cheap and dear,
 * even out). Per slice an item packs its rows of A into MR-row panels ([MC/MR, KC,
 * MR]: the MR values of one k are contiguous) and runs every (MR, NR) register
 * tile: `gemm(a_panel, b_panel, acc, trans_a=True)` with acc an [MR, NR] "fastest"
 * accumulator, which the Coder keeps in vector registers for the whole slice. The
 * first slice stores the tile, later ones add to it. IT is small (a few items per
 * core) because every share packs its rows of A again. Transposed operands are
 * transposed while packing; a batch of matrices times one matrix is one GEMM over
 * all rows; tril/triu skip the tiles the mask zeroes and mask the tiles it cuts.
 *
 * Matrix-vector: ROWS rows share each 16-wide load of the vector; row blocks
 * in parallel. diag(v) @ B: row i of B scaled by v[i].
 */
#include <stdio.h>
#include <string.h>

#include "rules_matmul_sketch.h"

static void dims(akg_buf *b, const char *prefix, int n)
{
    for (int i = 0; i < n; i++)
        akg_buf_appendf(b, "%s%s%d", i ? ", " : "", prefix, i);
}

static void batch_product(akg_buf *b, int n)
{
    akg_buf_puts(b, "1");
    for (int i = 0; i < n; i++)
        akg_buf_appendf(b, " * Z%d", i);
}

/* The tile's value after this slice (`o`: the product so far), then after the last slice
 * the epilogue on it: the vectors' tiles loaded, the statements, the result stored. */
static void epilogue(akg_buf *b, const akg_matmul_spec *s, const char *ind, const char *creg)
{
    akg_buf_appendf(b, "%sif k0 == 0:\n%s  o = acc\n%selse:\n", ind, ind, ind);
    akg_buf_appendf(b, "%s  cold = alloc([MR, NR])\n%s  load(%s -> cold)\n", ind, ind, creg);
    akg_buf_appendf(b, "%s  o = add(cold, acc)\n", ind);
    akg_buf_appendf(b, "%sif k0 + kc >= K:\n", ind);
    akg_buf_appendf(b, "%s  # the epilogue, once the tile holds all of K\n", ind);
    for (int v = 0; v < s->n_vecs; v++)
        akg_buf_appendf(b, "%s  vt%d = alloc([1, NR])\n%s  load(v%d[n0+j:n0+j+NR] -> vt%d)\n", ind,
                        v, ind, v, v);
    for (int v = 0; v < s->n_mats; v++) /* creg is "c[...]": the same region of res<v> */
        akg_buf_appendf(b, "%s  rt%d = alloc([MR, NR])\n%s  load(res%d%s -> rt%d)\n", ind, v, ind,
                        v, creg + 1, v);
    for (int i = 0; i < s->n_epilogue; i++)
        akg_buf_appendf(b, "%s  %s\n", ind, s->epilogue[i]);
    akg_buf_appendf(b, "%s  store(%s -> %s)\n%selse:\n%s  store(o -> %s)\n", ind, s->epilogue_out,
                    creg, ind, ind, creg);
}

/* The packed GEMM of one batch item (or of the whole product) at indentation ind (see the
 * file comment). par: B's packing and the items run in parallel. */
static void gemm_body(akg_buf *b, const akg_matmul_spec *s, const char *ind, bool par, bool zloop,
                      const char *zi, const char *zbi, const char *rows)
{
    /* per NC columns and group of K slices (as many as BG floats of panels hold): B's panels
     * packed once, by all threads together, and shared; then the items, a row block times a
     * share of NS columns, taken by the threads as they come free, each packing its rows of
     * A per slice and running its register tiles */
    akg_buf_appendf(b, "%sfor n0 in range(0, N, NC):\n", ind);
    akg_buf_appendf(b, "%s  nc = min(NC, N - n0)\n", ind);
    akg_buf_appendf(b, "%s  for k1 in range(0, K, KG):\n", ind);
    akg_buf_appendf(b, "%s    kg = min(KG, K - k1)\n", ind);
    akg_buf_appendf(b, "%s    pb = alloc([ceil(KG, KS), NC // NR, KS, NR], llm_hint=[\"slow\"])\n",
                    ind);
    if (par)
        akg_buf_appendf(b, "%s    @llm_hint(\"parallel\", \"coreidx\")\n", ind);
    akg_buf_appendf(b, "%s    for q in range(0, ceil(kg, KS) * ceil(nc, NR)):\n", ind);
    akg_buf_appendf(b, "%s      kq = q // ceil(nc, NR)\n", ind);
    akg_buf_appendf(b, "%s      jq = q %% ceil(nc, NR) * NR\n", ind);
    akg_buf_appendf(b, "%s      kp = k1 + kq * KS\n", ind);
    akg_buf_appendf(b, "%s      kn = min(KS, K - kp)\n", ind);
    if (s->trans_b) {
        akg_buf_appendf(b, "%s      tb = alloc([NR, kn])\n", ind);
        akg_buf_appendf(b, "%s      load(b[%sn0+jq:n0+jq+NR, kp:kp+kn] -> tb)\n", ind, zbi);
        akg_buf_appendf(b, "%s      store(transpose(tb) -> pb[kq, jq // NR, 0:kn, :])\n", ind);
    } else {
        akg_buf_appendf(
            b, "%s      load(b[%skp:kp+kn, n0+jq:n0+jq+NR] -> pb[kq, jq // NR, 0:kn, :])\n", ind,
            zbi);
    }
    if (par)
        akg_buf_appendf(b, "%s    @llm_hint(\"parallel\", \"coreidx\", \"dynamic\")\n", ind);
    akg_buf_appendf(b, "%s    for it in range(0, ceil(%s, MB) * ceil(nc, NS)):\n", ind, rows);
    akg_buf_appendf(b, "%s      m0 = it // ceil(nc, NS) * MB\n", ind);
    akg_buf_appendf(b, "%s      s0 = it %% ceil(nc, NS) * NS\n", ind);
    akg_buf_appendf(b, "%s      mc = min(MB, %s - m0)\n", ind, rows);
    akg_buf_appendf(b, "%s      for ks in range(0, ceil(kg, KS)):\n", ind);
    akg_buf_appendf(b, "%s        k0 = k1 + ks * KS\n", ind);
    akg_buf_appendf(b, "%s        kc = min(KS, K - k0)\n", ind);
    akg_buf_appendf(b, "%s        pa = alloc([MC // MR, KC, MR], llm_hint=[\"medium\"])\n", ind);
    akg_buf_appendf(b, "%s        for i in range(0, mc, MR):\n", ind);
    if (s->trans_a) {
        akg_buf_appendf(
            b, "%s          load(a[%sk0:k0+kc, m0+i:m0+i+MR] -> pa[i // MR, 0:kc, :])\n", ind, zi);
    } else {
        akg_buf_appendf(b, "%s          ta = alloc([MR, kc])\n", ind);
        akg_buf_appendf(b, "%s          load(a[%sm0+i:m0+i+MR, k0:k0+kc] -> ta)\n", ind, zi);
        akg_buf_appendf(b, "%s          store(transpose(ta) -> pa[i // MR, 0:kc, :])\n", ind);
    }
    akg_buf_appendf(b, "%s        for j in range(s0, min(s0 + NS, nc), NR):\n", ind);
    akg_buf_appendf(b, "%s          for i in range(0, mc, MR):\n", ind);
    const char *in2 = "            ";
    char cind[64];
    snprintf(cind, sizeof cind, "%s%s", ind, in2);
    const char *creg = zloop ? "c[z, m0+i:m0+i+MR, n0+j:n0+j+NR]" : "c[m0+i:m0+i+MR, n0+j:n0+j+NR]";
    char tile_ind[80];
    snprintf(tile_ind, sizeof tile_ind, "%s", cind);
    if (s->tri) {
        /* tril keeps n <= m + DG, triu keeps n >= m + DG (m, n: the row and column) */
        const char *outside =
            s->tri == 1 ? "n0 + j > m0 + i + MR - 1 + DG" : "n0 + j + NR - 1 < m0 + i + DG";
        const char *inside =
            s->tri == 1 ? "n0 + j + NR - 1 <= m0 + i + DG" : "n0 + j >= m0 + i + MR - 1 + DG";
        akg_buf_appendf(b, "%sif %s:\n", cind, outside);
        akg_buf_appendf(b, "%s  if k0 == 0:\n", cind);
        akg_buf_appendf(b, "%s    store(fill([MR, NR], 0.0) -> %s)\n", cind, creg);
        akg_buf_appendf(b, "%selse:\n", cind);
        snprintf(tile_ind, sizeof tile_ind, "%s  ", cind);
        akg_buf_appendf(b,
                        "%sacc = alloc([MR, NR], llm_hint=[\"fastest\", \"accumulator\", "
                        "\"init_zero\"])\n",
                        tile_ind);
        akg_buf_appendf(b, "%spa_i = alloc([kc, MR])\n%sload(pa[i // MR, 0:kc, :] -> pa_i)\n",
                        tile_ind, tile_ind);
        akg_buf_appendf(b, "%spb_j = alloc([kc, NR])\n%sload(pb[ks, j // NR, 0:kc, :] -> pb_j)\n",
                        tile_ind, tile_ind);
        akg_buf_appendf(b,
                        "%s@llm_hint(\"vectorize\", \"simd\", %d)\n%sgemm(pa_i, pb_j, acc, "
                        "trans_a=True)\n",
                        tile_ind, s->vw == 16 ? 16 : 8, tile_ind);
        /* the tile's value: this slice's product, plus what earlier slices stored */
        akg_buf_appendf(b, "%sif %s:\n", tile_ind, inside);
        akg_buf_appendf(b, "%s  if k0 == 0:\n%s    store(acc -> %s)\n%s  else:\n", tile_ind,
                        tile_ind, creg, tile_ind);
        akg_buf_appendf(b, "%s    cold = alloc([MR, NR])\n%s    load(%s -> cold)\n", tile_ind,
                        tile_ind, creg);
        akg_buf_appendf(b, "%s    store(add(cold, acc) -> %s)\n%selse:\n", tile_ind, creg,
                        tile_ind);
        akg_buf_appendf(b, "%s  cols = arange(0, NR)\n%s  rows = arange(0, MR)\n", tile_ind,
                        tile_ind);
        akg_buf_appendf(b,
                        "%s  keep = %s(cols[None, :] + (n0 + j), rows[:, None] + (m0 + i + DG))\n",
                        tile_ind, s->tri == 1 ? "le" : "ge");
        akg_buf_appendf(b, "%s  if k0 == 0:\n%s    store(where(keep, acc, 0.0) -> %s)\n%s  else:\n",
                        tile_ind, tile_ind, creg, tile_ind);
        akg_buf_appendf(b, "%s    cold = alloc([MR, NR])\n%s    load(%s -> cold)\n", tile_ind,
                        tile_ind, creg);
        akg_buf_appendf(b, "%s    store(where(keep, add(cold, acc), 0.0) -> %s)\n", tile_ind, creg);
    } else {
        akg_buf_appendf(b,
                        "%sacc = alloc([MR, NR], llm_hint=[\"fastest\", \"accumulator\", "
                        "\"init_zero\"])\n",
                        tile_ind);
        akg_buf_appendf(b, "%spa_i = alloc([kc, MR])\n%sload(pa[i // MR, 0:kc, :] -> pa_i)\n",
                        tile_ind, tile_ind);
        akg_buf_appendf(b, "%spb_j = alloc([kc, NR])\n%sload(pb[ks, j // NR, 0:kc, :] -> pb_j)\n",
                        tile_ind, tile_ind);
        akg_buf_appendf(b,
                        "%s@llm_hint(\"vectorize\", \"simd\", %d)\n%sgemm(pa_i, pb_j, acc, "
                        "trans_a=True)\n",
                        tile_ind, s->vw == 16 ? 16 : 8, tile_ind);
        if (s->n_epilogue > 0) {
            epilogue(b, s, tile_ind, creg);
            return;
        }
        akg_buf_appendf(b, "%sif k0 == 0:\n%s  store(acc -> %s)\n%selse:\n", tile_ind, tile_ind,
                        creg, tile_ind);
        akg_buf_appendf(b, "%s  cold = alloc([MR, NR])\n%s  load(%s -> cold)\n", tile_ind, tile_ind,
                        creg);
        akg_buf_appendf(b, "%s  store(add(cold, acc) -> %s)\n", tile_ind, creg);
    }
}

void akg_matmul_spec_registers(akg_matmul_spec *s, int vw)
{
    s->vw = vw == 16 ? 16 : 8;
    s->mr = 6;
    s->nr = s->vw == 16 ? 64 : 16;
}

char *akg_matmul_gemm_sketch(const akg_matmul_spec *s)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    int nbatch = s->rank_a - 2;
    bool fold = s->rank_a > 2 && s->rank_b == 2 && !s->trans_a && !s->tri;
    bool zloop = nbatch > 0 && !fold;
    bool zb = zloop && s->rank_b > 2; /* b has the batch dim too */
    const char *zi = zloop ? "z, " : "";
    const char *zbi = zb ? "z, " : "";
    const char *rows = fold ? "R" : "M";
    akg_buf_appendf(
        &b,
        "# %s: C = op(A) @ op(B) as a packed GEMM: per NC-column block and group of K\n"
        "# slices, B packed by all threads into shared NR-column panels; then items of an\n"
        "# MB-row block times NS columns, taken by the threads as they come free, each\n"
        "# packing its rows of A into MR-row panels per slice and running them tile by\n"
        "# tile with an MR x NR accumulator kept in registers (gemm on packed panels).\n",
        s->name);
    if (fold)
        akg_buf_puts(&b, "# A's batch dims are rows: one GEMM of R = batch * M rows.\n");
    if (s->tri)
        akg_buf_appendf(&b,
                        "# %s: tiles entirely outside the triangle are stored as zeros, tiles "
                        "the diagonal cuts are masked.\n",
                        s->tri == 1 ? "tril" : "triu");
    akg_buf_appendf(&b, "sketch %s {\n  symbols: M, N, K, KS, MB, NS, KG", s->name);
    if (fold)
        akg_buf_puts(&b, ", R");
    if (zloop)
        akg_buf_puts(&b, ", Z");
    if (s->tri)
        akg_buf_puts(&b, ", DG");
    for (int i = 0; i < nbatch; i++)
        akg_buf_appendf(&b, ", Z%d", i);
    akg_buf_puts(&b, ";\n  tensors: ");
    if (fold)
        akg_buf_puts(&b, "a[R, K]: f32; ");
    else
        akg_buf_appendf(&b, "a[%s%s]: f32; ", zloop ? "Z, " : "", s->trans_a ? "K, M" : "M, K");
    akg_buf_appendf(&b, "b[%s%s]: f32; ", zb ? "Z, " : "", s->trans_b ? "N, K" : "K, N");
    akg_buf_appendf(&b, "c[%s%s, N]: f32;", zloop ? "Z, " : "", rows);
    for (int v = 0; v < s->n_vecs; v++)
        akg_buf_appendf(&b, " v%d[N]: f32;", v);
    for (int v = 0; v < s->n_mats; v++)
        akg_buf_appendf(&b, " res%d[%s%s, N]: f32;", v, zloop ? "Z, " : "", rows);
    akg_buf_puts(&b, "\n");
    akg_buf_appendf(
        &b,
        "  constexpr: MR = tune(%ld, %s), NR = tune(%ld, %s), KC = tune(%ld, 128, 384), "
        "MC = tune(%ld, 48, 144), NC = tune(%ld, 512, 2048), IT = tune(4, 8, 16), BG = "
        "2097152%s;\n",
        s->mr, s->vw == 16 ? "12, 4" : "4", s->nr, s->vw == 16 ? "32" : "8, 24", s->kc, s->mc,
        s->nc, zloop ? ", ZB = tune(8, 4, 16)" : "");
    /* binding */
    akg_buf_appendf(&b, "  bind: a = %s(\"%s\", [", s->a_weight ? "weight" : "input", s->a_name);
    dims(&b, "Z", nbatch);
    akg_buf_appendf(&b, "%s%s]), b = %s(\"%s\", [", nbatch ? ", " : "",
                    s->trans_a ? "K, M" : "M, K", s->b_weight ? "weight" : "input", s->b_name);
    if (s->rank_b > 2)
        akg_buf_puts(&b, "Z0, "), dims(&b, "Z", 0);
    for (int i = 1; i < s->rank_b - 2; i++)
        akg_buf_appendf(&b, "Z%d, ", i);
    akg_buf_appendf(&b, "%s])", s->trans_b ? "N, K" : "K, N");
    if (fold) {
        akg_buf_puts(&b, ", R = ");
        batch_product(&b, nbatch);
        akg_buf_puts(&b, " * M");
    }
    if (zloop) {
        akg_buf_puts(&b, ", Z = ");
        batch_product(&b, nbatch);
    }
    /* balanced slices of K and row blocks (rounded up to MR) of at most KC and MC; column
     * shares of NS (a multiple of NR) so that a column block has at least IT items */
    akg_buf_appendf(
        &b,
        ", KS = ceil(K, max(1, ceil(K, KC))), MB = ceil(ceil(%s, max(1, ceil(%s, MC))), "
        "MR) * MR\n  bind: NS = ceil(ceil(min(N, NC), max(1, ceil(IT, ceil(%s, MB)))), NR) * NR, "
        "KG = KS * max(1, min(ceil(K, KS), BG // (KS * NC)))\n"
        "  bind: c = output(0, [",
        rows, rows, rows);
    dims(&b, "Z", nbatch);
    akg_buf_appendf(&b, "%sM, N])", nbatch ? ", " : "");
    if (s->tri) {
        if (s->diag_init[0])
            akg_buf_appendf(&b, ", DG = init(\"%s\")", s->diag_init);
        else
            akg_buf_appendf(&b, ", DG = %ld", s->diag);
    }
    for (int v = 0; v < s->n_vecs; v++)
        akg_buf_appendf(&b, ", v%d = %s(\"%s\", [N])", v, s->vec_weight[v] ? "weight" : "input",
                        s->vec_names[v]);
    for (int v = 0; v < s->n_mats; v++) {
        akg_buf_appendf(&b, ", res%d = %s(\"%s\", [", v, s->mat_weight[v] ? "weight" : "input",
                        s->mat_names[v]);
        dims(&b, "Z", nbatch);
        akg_buf_appendf(&b, "%sM, N])", nbatch ? ", " : "");
    }
    akg_buf_puts(&b, "\n\n");
    if (zloop) {
        /* enough batch items: one whole item per task, its panels its own; fewer: the
         * threads share each item */
        akg_buf_puts(&b, "  if Z >= ZB:\n    @llm_hint(\"parallel\", \"coreidx\")\n"
                         "    for z in range(0, Z):\n");
        gemm_body(&b, s, "      ", false, zloop, zi, zbi, rows);
        akg_buf_puts(&b, "  else:\n    for z in range(0, Z):\n");
        gemm_body(&b, s, "      ", true, zloop, zi, zbi, rows);
    } else {
        gemm_body(&b, s, "  ", true, zloop, zi, zbi, rows);
    }
    akg_buf_puts(&b, "}\n");
    return akg_buf_take(&b);
}

char *akg_matmul_gemv_sketch(const akg_matmul_spec *s)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(&b,
                    "# %s: y = A @ x with one column on the right: a bandwidth-bound product.\n"
                    "# ROWS rows share each 16-wide load of x; each row accumulates in 16 lanes\n"
                    "# (short chains), summed at the end; row blocks run in parallel.\n",
                    s->name);
    akg_buf_appendf(&b, "sketch %s {\n", s->name);
    akg_buf_puts(&b, "  symbols: M, K;\n  tensors: a[M, K]: f32; x[K]: f32; y[M]: f32;\n");
    akg_buf_appendf(&b, "  constexpr: ROWS = tune(%ld, 2, 8), LANES = 16;\n", s->rows);
    akg_buf_appendf(&b,
                    "  bind: a = input(\"%s\", [M, K]), x = input(\"%s\", [K, 1]), y = "
                    "output(0, [M, 1])\n\n",
                    s->a_name, s->b_name);
    akg_buf_puts(&b, "  @llm_hint(\"parallel\", \"coreidx\")\n");
    akg_buf_puts(&b, "  for r in range(0, M, ROWS):\n");
    akg_buf_puts(&b, "    acc = alloc([ROWS, LANES], llm_hint=[\"fastest\", \"accumulator\", "
                     "\"init_zero\"])\n");
    akg_buf_puts(&b, "    for k in range(0, K, LANES):\n");
    akg_buf_puts(&b, "      t = alloc([ROWS, LANES])\n      load(a[r:r+ROWS, k:k+LANES] -> t)\n");
    akg_buf_puts(&b, "      xt = alloc([1, LANES])\n      load(x[k:k+LANES] -> xt)\n");
    akg_buf_puts(&b, "      @llm_hint(\"vectorize\", \"simd\")\n");
    akg_buf_puts(&b, "      acc = add(acc, mul(t, xt))\n");
    akg_buf_puts(&b, "    s = reduce_sum(acc, axis=1)\n");
    akg_buf_puts(&b, "    store(s -> y[r:r+ROWS])\n}\n");
    return akg_buf_take(&b);
}

char *akg_matmul_rowscale_sketch(const akg_matmul_spec *s)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(&b,
                    "# %s: C = diag(v) @ B is row i of B scaled by v[i]; the diagonal matrix is\n"
                    "# never built and no product is computed.\n",
                    s->name);
    akg_buf_appendf(&b, "sketch %s {\n", s->name);
    akg_buf_puts(&b, "  symbols: M, N;\n  tensors: v[M]: f32; b[M, N]: f32; c[M, N]: f32;\n");
    akg_buf_appendf(&b, "  constexpr: ROWS = tune(%ld, 1, 16);\n", s->rows);
    akg_buf_appendf(&b,
                    "  bind: v = input(\"%s\", [M]), b = input(\"%s\", [M, N]), c = output(0, "
                    "[M, N])\n\n",
                    s->a_name, s->b_name);
    akg_buf_puts(&b, "  @llm_hint(\"parallel\", \"coreidx\")\n");
    akg_buf_puts(&b, "  for r in range(0, M, ROWS):\n");
    akg_buf_puts(&b, "    s = alloc([ROWS, 1])\n    load(v[r:r+ROWS] -> s)\n");
    akg_buf_puts(&b, "    t = alloc([ROWS, N])\n    load(b[r:r+ROWS, :] -> t)\n");
    akg_buf_puts(&b, "    @llm_hint(\"vectorize\", \"simd\")\n");
    akg_buf_puts(&b, "    store(mul(t, s) -> c[r:r+ROWS, :])\n}\n");
    return akg_buf_take(&b);
}
