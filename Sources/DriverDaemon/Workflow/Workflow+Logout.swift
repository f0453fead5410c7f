import DriverAPI
import DriverStore
import FoundationEssentials

extension Workflow {
    /// Logout (design brief §3.6): personal data goes (tasks with names, phones and addresses, the stop
    /// order, pushes, photos already uploaded); transitions and proofs still queued stay, to be sent after
    /// the same driver's next login.
    func logout() async throws -> LogoutResult {
        let result = try await clearPersonalData()
        do {
            try session?.logout()
        } catch {
            throw APIError(.internalError, "logged out, but \(error): the login may come back after a restart")
        }
        return result
    }

    /// What a logout clears; also run when another driver logs in over this one (the uplink asks, before it keeps the
    /// new driver's tokens), so no driver sees another's orders or messages.
    func clearPersonalData() async throws -> LogoutResult {
        let pending = try outbox.depth()
        let keptPhotos = Set(try outbox.pendingFiles(of: .podPhoto))
        let removedTasks: Int
        do {
            removedTasks = try book.removeAll()
        } catch {
            throw book.store.health.refusal("the logout (clearing the tasks)", error)
        }
        tasks = [:]
        sequence = []
        etas.removeAll()
        syncedAt = nil
        do {
            try await pushes.removeAll()
        } catch {
            throw book.store.health.refusal("the logout (clearing the messages)", error)
        }
        do {
            try book.store.erasePersonalTraces()
        } catch {
            logger.error("cannot wipe the deleted personal data from the store's files: \(Store.describeWriteFailure(error))")
        }
        var removedPhotos = 0
        // No spool yet: no photo was ever taken on this unit.
        let files = FileManager.default.fileExists(atPath: spool.directory)
            ? logger.valueOrLog("listing the photo spool") { try FileManager.default.contentsOfDirectory(atPath: spool.directory) } ?? [] : []
        for name in files where !keptPhotos.contains(spool.directory + "/" + name) {
            if logger.valueOrLog("removing an uploaded photo", { try FileManager.default.removeItem(atPath: spool.directory + "/" + name) }) != nil {
                removedPhotos += 1
            }
        }
        publishRoute()
        logger.info("logged out: personal data cleared", metadata: ["tasks": "\(removedTasks)", "photos": "\(removedPhotos)"])
        return LogoutResult(keptItems: pending.items, removedTasks: removedTasks, removedPhotos: removedPhotos)
    }
}
