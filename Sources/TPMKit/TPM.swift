import CTSS2
import Crypto
import FoundationEssentials
import Glibc
import Synchronization
import X509

/// A TPM 2.0, reached through tpm2-tss's TCTI loader (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=2321`): one
/// connection for the process's life, every command under one lock (an ESAPI context serves one caller at a time).
public final class TPM: Sendable {
    public struct Failure: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// The TCTI configuration it was opened with.
    public let tcti: String
    private let connection: Mutex<driverd_tpm>

    public init(tcti: String) throws(Failure) {
        var tpm = driverd_tpm()
        try Self.check(driverd_tpm_open(tcti, &tpm), "opening the TPM at \(tcti)")
        self.tcti = tcti
        connection = Mutex(tpm)
    }

    deinit {
        connection.withLock { driverd_tpm_close(&$0) }
    }

    /// The one place a TSS2 return code becomes a Swift error (tpm2-tss's own text for it).
    static func check(_ code: TSS2_RC, _ what: String) throws(Failure) {
        guard code != TSS2_RC_SUCCESS else { return }
        throw Failure(description: "\(what): \(String(cString: Tss2_RC_Decode(code)))")
    }

    /// A new ECDSA P-256 signing key made in the TPM under the owner's storage key: its private part leaves the TPM
    /// only wrapped by it (`TPMKey.blob`), so the key is of no use on another unit's TPM or off the unit.
    public func makeKey() throws(Failure) -> TPMKey {
        let blob = try connection.withLock { tpm throws(Failure) -> [UInt8] in
            let primary = try Self.makePrimary(&tpm)
            var buffer = [UInt8](repeating: 0, count: 4096)
            var length = 0
            let made = driverd_tpm_create_key(&tpm, primary, &buffer, buffer.count, &length)
            try Self.unloadPrimary(primary, &tpm, after: made, "making a key in the TPM")
            return Array(buffer.prefix(length))
        }
        return try loadKey(blob)
    }

    /// A key `makeKey` made, from the blob the unit stored.
    public func loadKey(_ blob: [UInt8]) throws(Failure) -> TPMKey {
        let (handle, point) = try load(blob)
        let publicKey: Certificate.PublicKey
        do {
            publicKey = Certificate.PublicKey(try P256.Signing.PublicKey(x963Representation: point))
        } catch {
            throw Failure(description: "the TPM's key has no valid P-256 public point: \(error)")
        }
        return TPMKey(loaded: LoadedKey(tpm: self, handle: handle), blob: blob, publicKey: publicKey)
    }

    /// Loads `blob`: its handle, and its public point (X9.63).
    func load(_ blob: [UInt8]) throws(Failure) -> (ESYS_TR, point: [UInt8]) {
        try connection.withLock { tpm throws(Failure) -> (ESYS_TR, point: [UInt8]) in
            let primary = try Self.makePrimary(&tpm)
            var handle: ESYS_TR = 0
            var x = [UInt8](repeating: 0, count: 32)
            var y = [UInt8](repeating: 0, count: 32)
            let loaded = driverd_tpm_load(&tpm, primary, blob, blob.count, &handle, &x, &y)
            try Self.unloadPrimary(primary, &tpm, after: loaded, "loading the unit's key into the TPM")
            return (handle, [0x04] + x + y)
        }
    }

    /// The owner's storage key, loaded: made again from the TPM's seed each time (the same key, and nothing of it
    /// stored); `unloadPrimary` after use.
    private static func makePrimary(_ tpm: inout driverd_tpm) throws(Failure) -> ESYS_TR {
        var primary: ESYS_TR = 0
        try check(driverd_tpm_primary(&tpm, &primary), "making the TPM's storage key")
        return primary
    }

    /// Unloads the storage key (it only takes a slot while loaded), then judges `code`, what was done with it, and the
    /// unloading.
    private static func unloadPrimary(_ primary: ESYS_TR, _ tpm: inout driverd_tpm, after code: TSS2_RC, _ what: String) throws(Failure) {
        let flushed = driverd_tpm_flush(&tpm, primary)
        try check(code, what)
        try check(flushed, "unloading the TPM's storage key")
    }

    /// Unloads a key (a TPM has room for a few loaded objects; without the kernel's resource manager, as with
    /// swtpm, they outlive the connection).
    func unload(_ handle: ESYS_TR) throws(Failure) {
        try connection.withLock { tpm throws(Failure) in try Self.check(driverd_tpm_flush(&tpm, handle), "unloading a key from the TPM") }
    }

    /// Drops the record of a key loaded again meanwhile, sending nothing to the TPM: after a reset its handle may name
    /// the key loaded since, which a flush would unload. If the TPM still held it (a command failed for another
    /// reason), its slot stays taken until the connection closes (the kernel's resource manager then frees it).
    func forget(_ handle: ESYS_TR) {
        connection.withLock { tpm in
            // Fails only for a record already gone (its object flushed): the same end.
            _ = driverd_tpm_forget(&tpm, handle)
        }
    }

    /// ECDSA over a SHA-256 digest with a loaded key.
    func sign(_ handle: ESYS_TR, digest: [UInt8]) throws(Failure) -> P256.Signing.ECDSASignature {
        var r = [UInt8](repeating: 0, count: 32)
        var s = [UInt8](repeating: 0, count: 32)
        try connection.withLock { tpm throws(Failure) in
            try Self.check(driverd_tpm_sign(&tpm, handle, digest, &r, &s), "signing with the unit's key in the TPM")
        }
        do {
            return try P256.Signing.ECDSASignature(rawRepresentation: r + s)
        } catch {
            throw Failure(description: "the TPM's signature is not a P-256 ECDSA signature: \(error)")
        }
    }
}

/// A key loaded into the TPM, unloaded when the last holder lets it go; loaded again when the TPM lost it.
final class LoadedKey: Sendable {
    let tpm: TPM
    private let handle: Mutex<ESYS_TR>

    init(tpm: TPM, handle: ESYS_TR) {
        self.tpm = tpm
        self.handle = Mutex(handle)
    }

    func sign(_ digest: [UInt8]) throws(TPM.Failure) -> P256.Signing.ECDSASignature {
        try tpm.sign(handle.withLock { $0 }, digest: digest)
    }

    /// Loads `blob` (this key) again: a TPM reset lost its loaded objects.
    func reload(_ blob: [UInt8]) throws(TPM.Failure) {
        let fresh = try tpm.load(blob).0
        let replaced = handle.withLock { current in
            defer { current = fresh }
            return current
        }
        if replaced != fresh { tpm.forget(replaced) }
    }

    var current: ESYS_TR { handle.withLock { $0 } }

    deinit { Self.unload(handle.withLock { $0 }, from: tpm) }

    private static func unload(_ handle: ESYS_TR, from tpm: TPM) {
        do {
            try tpm.unload(handle)
        } catch {
            // Nobody to tell from a deinit: the slot stays taken until the connection closes (the
            // kernel's resource manager then frees it).
            let line = Array("driverd: \(error)\n".utf8)
            _ = write(STDERR_FILENO, line, line.count)
        }
    }
}

/// A signing key the TPM made and holds, loaded: it signs only through the TPM.
public struct TPMKey: Sendable, Hashable {
    let loaded: LoadedKey
    /// What the unit stores: the key's public area and its private area wrapped by the TPM (marshalled).
    public let blob: [UInt8]
    public let publicKey: Certificate.PublicKey

    /// ECDSA P-256 over SHA-256 of `data`. A TPM that was reset (its loaded objects gone) gets the key loaded again,
    /// once, and signs: the unit's identity outlives its TPM's resets.
    public func signature(for data: some DataProtocol) throws(TPM.Failure) -> P256.Signing.ECDSASignature {
        let digest = Array(SHA256.hash(data: data))
        do {
            return try loaded.sign(digest)
        } catch {
            do {
                try loaded.reload(blob)
            } catch let reload {
                throw TPM.Failure(description: "\(error); loading the key again: \(reload)")
            }
            return try loaded.sign(digest)
        }
    }

    public static func == (lhs: TPMKey, rhs: TPMKey) -> Bool { lhs.blob == rhs.blob }
    public func hash(into hasher: inout Hasher) { hasher.combine(blob) }
}
