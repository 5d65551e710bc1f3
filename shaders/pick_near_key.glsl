// A table row's near key: the nearest depth key any point of its box can take under the very
// f32 matrix the pick pass draws it with, less the GPU's rounding of clip z and w (as
// crates/picking-vk/src/plan/depth_keys bounds it on the CPU). Keys are NDC depth, negated
// where nearer is larger. shaders/pick_cull_draws.comp computes it once per row that a pair
// with occlusion keeps, in the thread that composed the row, and stores it in f32 (rounded
// nearer) in the row's last word; shaders/pick_occlusion.glsl reads it back for every
// survivor it walks instead of computing it there, one workgroup per pair.

const double F32_EPS = 5.9604644775390625e-8;
// The GPU's f32 error in a clip coordinate, relative to the sum of its terms' magnitudes.
const double BOX_CLIP_ROUNDING = 32.0 * F32_EPS;
const double FAR_AWAY = 1.0e300;

// The nearest key the box (`lo`, `hi`) can take under `m`; -FAR_AWAY when a corner may lie
// at or behind the eye (nothing is known). z / w is quasi-linear where w > 0: over the box
// its extremes lie at corners.
double box_near_key(dmat4 m, dvec3 lo, dvec3 hi, bool larger) {
    dvec3 terms = max(abs(lo), abs(hi));
    dvec4 rz = dvec4(m[0][2], m[1][2], m[2][2], m[3][2]);
    dvec4 rw = dvec4(m[0][3], m[1][3], m[2][3], m[3][3]);
    double ez = BOX_CLIP_ROUNDING * (dot(abs(rz.xyz), terms) + abs(rz.w));
    double ew = BOX_CLIP_ROUNDING * (dot(abs(rw.xyz), terms) + abs(rw.w));
    double nearest = FAR_AWAY;
    for (uint k = 0u; k < 8u; k++) {
        dvec3 p = dvec3((k & 1u) != 0u ? hi.x : lo.x, (k & 2u) != 0u ? hi.y : lo.y, (k & 4u) != 0u ? hi.z : lo.z);
        double z = dot(rz.xyz, p) + rz.w;
        double w = dot(rw.xyz, p) + rw.w;
        if (!(w - ew > 0.0)) {
            return -FAR_AWAY;
        }
        // The nearest the GPU's rounding can make this corner.
        double key = larger ? -((z + ez) / (z + ez >= 0.0 ? w - ew : w + ew)) : (z - ez) / (z - ez >= 0.0 ? w + ew : w - ew);
        if (isnan(key)) {
            return -FAR_AWAY;
        }
        nearest = min(nearest, key);
    }
    return nearest;
}

// Whether every key the box (`lo`, `hi`) can take under `m` lies beyond `bound`: as
// `box_near_key(m, lo, hi, larger) > bound`, but each corner's quotient is compared by a
// product (its denominator is positive) instead of divided out. False where nothing is known.
bool box_beyond(dmat4 m, dvec3 lo, dvec3 hi, bool larger, double bound) {
    dvec3 terms = max(abs(lo), abs(hi));
    dvec4 rz = dvec4(m[0][2], m[1][2], m[2][2], m[3][2]);
    dvec4 rw = dvec4(m[0][3], m[1][3], m[2][3], m[3][3]);
    double ez = BOX_CLIP_ROUNDING * (dot(abs(rz.xyz), terms) + abs(rz.w));
    double ew = BOX_CLIP_ROUNDING * (dot(abs(rw.xyz), terms) + abs(rw.w));
    for (uint k = 0u; k < 8u; k++) {
        dvec3 p = dvec3((k & 1u) != 0u ? hi.x : lo.x, (k & 2u) != 0u ? hi.y : lo.y, (k & 4u) != 0u ? hi.z : lo.z);
        double z = dot(rz.xyz, p) + rz.w;
        double w = dot(rw.xyz, p) + rw.w;
        if (!(w - ew > 0.0)) {
            return false;
        }
        // The nearest the GPU's rounding can make this corner, as a quotient.
        double numerator = larger ? -(z + ez) : z - ez;
        double denominator = larger ? (z + ez >= 0.0 ? w - ew : w + ew) : (z - ez >= 0.0 ? w + ew : w - ew);
        // Also false for a NaN.
        if (!(numerator > bound * denominator)) {
            return false;
        }
    }
    return true;
}

// `key` as stored: in f32, rounded towards -inf (never farther than the f64 key), and -inf
// for none (-FAR_AWAY, NaN, or a key past the f32 range; 0xFF800000).
uint key_word(double key) {
    float f = float(key);
    if (!(key > -3.0e38)) {
        return 0xFF800000u;
    }
    if (double(f) > key) {
        // One step towards -inf: a positive float's bits less one, a negative normal's plus
        // one; from a zero or a negative denormal (which a GPU may flush to zero, farther),
        // the negative normal nearest zero.
        uint bits = floatBitsToUint(f);
        float least_negative = uintBitsToFloat(0x80800000u);
        f = f > 0.0 ? uintBitsToFloat(bits - 1u) : (f <= least_negative ? uintBitsToFloat(bits + 1u) : least_negative);
    }
    return floatBitsToUint(f);
}

// A stored key in f64: -FAR_AWAY for none.
double stored_key(uint word) {
    float f = uintBitsToFloat(word);
    return isinf(f) ? -FAR_AWAY : double(f);
}
