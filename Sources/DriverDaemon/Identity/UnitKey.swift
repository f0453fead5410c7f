import Crypto
import DriverDomain
import FoundationEssentials
import Glibc
import Logging
import NIOSSL
import TPMKit
import X509

/// One of the unit's keys, as its owner uses it: an ECDSA P-256 key in a PEM file, or one a TPM made and holds (the
/// file then has the key's public part and its private part wrapped by that TPM: of no use anywhere else).
enum UnitKey: Sendable, Equatable {
    case file(pem: String)
    case tpm(TPMKey)

    /// What the unit keeps on disk.
    var stored: Data {
        switch self {
        case .file(let pem): Data(pem.utf8)
        case .tpm(let key): Data(key.blob)
        }
    }

    var publicKey: Certificate.PublicKey {
        get throws {
            switch self {
            case .file(let pem): Certificate.PublicKey(try P256.Signing.PrivateKey(pemRepresentation: pem).publicKey)
            case .tpm(let key): key.publicKey
            }
        }
    }

    /// The key as swift-certificates signs a certificate request with it.
    var certificateKey: Certificate.PrivateKey {
        get throws {
            switch self {
            case .file(let pem): Certificate.PrivateKey(try P256.Signing.PrivateKey(pemRepresentation: pem))
            case .tpm(let key): key.certificateKey
            }
        }
    }

    /// The key as the TLS handshake presents it.
    var tlsKey: NIOSSLPrivateKey {
        get throws {
            switch self {
            case .file(let pem): try NIOSSLPrivateKey(bytes: Array(pem.utf8), format: .pem)
            case .tpm(let key): key.tlsKey
            }
        }
    }

    /// ECDSA P-256 with SHA-256 over `bytes`, DER.
    func signature(for bytes: [UInt8]) throws -> [UInt8] {
        switch self {
        case .file(let pem): Array(try P256.Signing.PrivateKey(pemRepresentation: pem).signature(for: bytes).derRepresentation)
        case .tpm(let key): Array(try key.signature(for: bytes).derRepresentation)
        }
    }
}

/// Where the unit's keys are made and read: PEM files, or a TPM (`backend.tpm`).
enum UnitKeyStore: Sendable {
    case files
    case tpm(TPM)

    /// The key file's suffix: `unit-key.pem` or `unit-key.tpm`.
    var suffix: String {
        switch self {
        case .files: Self.fileSuffix
        case .tpm: Self.tpmSuffix
        }
    }

    static let fileSuffix = "pem"
    static let tpmSuffix = "tpm"

    /// The unit's key file of a store with `suffix` in `directory`; `next`: the new key of a rotation under way.
    static func keyPath(in directory: String, suffix: String, next: Bool = false) -> String {
        directory + (next ? "/unit-key.next." : "/unit-key.") + suffix
    }

    var description: String {
        switch self {
        case .files: "a key file"
        case .tpm(let tpm): "the TPM at \(tpm.tcti)"
        }
    }

    func make() throws -> UnitKey {
        switch self {
        case .files: .file(pem: P256.Signing.PrivateKey().pemRepresentation)
        case .tpm(let tpm): .tpm(try tpm.makeKey())
        }
    }

    func read(_ stored: Data) throws -> UnitKey {
        switch self {
        case .files:
            let pem = String(decoding: stored, as: UTF8.self)
            _ = try P256.Signing.PrivateKey(pemRepresentation: pem)
            return .file(pem: pem)
        case .tpm(let tpm):
            return .tpm(try tpm.loadKey(Array(stored)))
        }
    }

    /// The store for `setting` (`backend.tpm`) and the keys already in `directory`. A unit keeps the kind of key it
    /// has (another kind would be another unit to the fleet); a first start makes its key in the TPM when there is
    /// one (`auto`: `/dev/tpmrm0`) or one is named, else in a file.
    static func choose(setting: String, directory: String, logger: Logger) throws -> UnitKeyStore {
        let exists = { (path: String) in access(path, F_OK) == 0 }
        let hasFileKey = exists(keyPath(in: directory, suffix: fileSuffix))
        let hasTPMKey = exists(keyPath(in: directory, suffix: tpmSuffix))
        if hasFileKey {
            if setting != DaemonConfig.tpmAuto, setting != DaemonConfig.tpmNone {
                logger.warning("backend.tpm names a TPM, but this unit's key is a file made before: it keeps it (a new key would be a new unit: remove \(directory) to enrol again with a TPM key)")
            }
            return .files
        }
        let tcti: String? = switch setting {
        case DaemonConfig.tpmNone: nil
        case DaemonConfig.tpmAuto: exists(DaemonConfig.tpmDevice) ? "device:" + DaemonConfig.tpmDevice : nil
        default: setting
        }
        guard let tcti else {
            if hasTPMKey { throw UnitIdentity.Failure(description: "the unit's key is held by a TPM, but backend.tpm is \"none\" and no TPM is opened") }
            return .files
        }
        let tpm: TPM
        do {
            tpm = try TPM(tcti: tcti)
        } catch {
            guard setting == DaemonConfig.tpmAuto, !hasTPMKey else { throw error }
            logger.warning("no TPM to hold the unit's key (\(error)): it is made in a file instead")
            return .files
        }
        return .tpm(tpm)
    }
}
