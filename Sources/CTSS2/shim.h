// The TPM 2.0 software stack (tpm2-tss: ESAPI, the TCTI loader, marshalling, error text), for the unit's key held in
// a TPM. Only `TPMKit` imports it. The object templates are C initialisers here: nested unions read best in C.
#ifndef DRIVERD_CTSS2_SHIM_H
#define DRIVERD_CTSS2_SHIM_H

#include <stdint.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_tctildr.h>

typedef struct {
    ESYS_CONTEXT *esys;
    TSS2_TCTI_CONTEXT *tcti;
} driverd_tpm;

/// Opens the TPM named by a TCTI configuration ("device:/dev/tpmrm0", "swtpm:host=127.0.0.1,port=2321").
static inline TSS2_RC driverd_tpm_open(const char *tcti_conf, driverd_tpm *tpm) {
    tpm->esys = NULL;
    tpm->tcti = NULL;
    TSS2_RC rc = Tss2_TctiLdr_Initialize(tcti_conf, &tpm->tcti);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = Esys_Initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) Tss2_TctiLdr_Finalize(&tpm->tcti);
    return rc;
}

static inline void driverd_tpm_close(driverd_tpm *tpm) {
    if (tpm->esys) Esys_Finalize(&tpm->esys);
    if (tpm->tcti) Tss2_TctiLdr_Finalize(&tpm->tcti);
}

/// The owner hierarchy's storage key (the TCG's ECC P-256 SRK template): the same key from the same seed every time,
/// so nothing of it is stored.
static inline TSS2_RC driverd_tpm_primary(driverd_tpm *tpm, ESYS_TR *primary) {
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_ECC;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
    template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
    template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    template.publicArea.unique.ecc.x.size = 32;
    template.publicArea.unique.ecc.y.size = 32;
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    return Esys_CreatePrimary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template,
                              &outside, &pcrs, primary, NULL, NULL, NULL, NULL);
}

/// A new ECDSA P-256 signing key under `primary`, made in the TPM (its private part never leaves it unencrypted):
/// its public and wrapped private areas, marshalled into `blob` (the unit keeps them in a file).
static inline TSS2_RC driverd_tpm_create_key(driverd_tpm *tpm, ESYS_TR primary, uint8_t *blob, size_t capacity, size_t *length) {
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_ECC;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_SIGN_ENCRYPT;
    template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
    template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
    template.publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
    template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    TPM2B_PRIVATE *private_area = NULL;
    TPM2B_PUBLIC *public_area = NULL;
    TSS2_RC rc = Esys_Create(tpm->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside,
                             &pcrs, &private_area, &public_area, NULL, NULL, NULL);
    if (rc != TSS2_RC_SUCCESS) return rc;
    size_t offset = 0;
    rc = Tss2_MU_TPM2B_PUBLIC_Marshal(public_area, blob, capacity, &offset);
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PRIVATE_Marshal(private_area, blob, capacity, &offset);
    *length = offset;
    Esys_Free(private_area);
    Esys_Free(public_area);
    return rc;
}

/// Copies a TPM2B_ECC_PARAMETER into 32 bytes, right-aligned (a coordinate or a signature half may come shorter).
static inline int driverd_tpm_copy32(const TPM2B_ECC_PARAMETER *from, uint8_t to[32]) {
    if (from->size > 32) return 0;
    memset(to, 0, 32);
    memcpy(to + 32 - from->size, from->buffer, from->size);
    return 1;
}

/// Loads a key `driverd_tpm_create_key` made, under `primary`; its public point into `x` and `y`.
static inline TSS2_RC driverd_tpm_load(driverd_tpm *tpm, ESYS_TR primary, const uint8_t *blob, size_t length, ESYS_TR *key,
                                       uint8_t x[32], uint8_t y[32]) {
    TPM2B_PUBLIC public_area = {0};
    TPM2B_PRIVATE private_area = {0};
    size_t offset = 0;
    TSS2_RC rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal(blob, length, &offset, &public_area);
    if (rc == TSS2_RC_SUCCESS) rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal(blob, length, &offset, &private_area);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (public_area.publicArea.type != TPM2_ALG_ECC || public_area.publicArea.parameters.eccDetail.curveID != TPM2_ECC_NIST_P256
        || !driverd_tpm_copy32(&public_area.publicArea.unique.ecc.x, x) || !driverd_tpm_copy32(&public_area.publicArea.unique.ecc.y, y))
        return TSS2_ESYS_RC_BAD_VALUE;
    return Esys_Load(tpm->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &private_area, &public_area, key);
}

/// ECDSA over a SHA-256 digest with a loaded key: the signature's r and s, 32 bytes each.
static inline TSS2_RC driverd_tpm_sign(driverd_tpm *tpm, ESYS_TR key, const uint8_t digest[32], uint8_t r[32], uint8_t s[32]) {
    TPM2B_DIGEST message = {.size = 32};
    memcpy(message.buffer, digest, 32);
    TPMT_SIG_SCHEME scheme = {.scheme = TPM2_ALG_ECDSA, .details = {.ecdsa = {.hashAlg = TPM2_ALG_SHA256}}};
    TPMT_TK_HASHCHECK validation = {.tag = TPM2_ST_HASHCHECK, .hierarchy = TPM2_RH_NULL, .digest = {.size = 0}};
    TPMT_SIGNATURE *signature = NULL;
    TSS2_RC rc = Esys_Sign(tpm->esys, key, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &message, &scheme, &validation, &signature);
    if (rc != TSS2_RC_SUCCESS) return rc;
    if (!driverd_tpm_copy32(&signature->signature.ecdsa.signatureR, r) || !driverd_tpm_copy32(&signature->signature.ecdsa.signatureS, s))
        rc = TSS2_ESYS_RC_BAD_VALUE;
    Esys_Free(signature);
    return rc;
}

static inline TSS2_RC driverd_tpm_flush(driverd_tpm *tpm, ESYS_TR object) { return Esys_FlushContext(tpm->esys, object); }

/// Forgets ESAPI's record of an object without a TPM command: after a TPM reset its handle may name another object.
static inline TSS2_RC driverd_tpm_forget(driverd_tpm *tpm, ESYS_TR object) { return Esys_TR_Close(tpm->esys, &object); }

#endif
