import JSONRPC
import Testing

@Suite("Peer access policy")
struct AccessPolicyTests {
    let policy = PeerAccessPolicy(groupName: "driver", groupID: 990, daemonUID: 500)

    func peer(uid: UInt32, gid: UInt32, groups: [UInt32] = []) -> PeerCredentials {
        PeerCredentials(pid: 1, uid: uid, gid: gid, supplementaryGroups: groups)
    }

    @Test func rootAndDaemonUserMayMutate() {
        #expect(policy.mayMutate(peer(uid: 0, gid: 0)))
        #expect(policy.mayMutate(peer(uid: 500, gid: 500)))
    }

    @Test func groupMembersMayMutate() {
        #expect(policy.mayMutate(peer(uid: 1000, gid: 990)))
        #expect(policy.mayMutate(peer(uid: 1000, gid: 1000, groups: [27, 990])))
    }

    @Test func othersMayNot() {
        #expect(!policy.mayMutate(peer(uid: 1000, gid: 1000, groups: [27])))
        let noGroup = PeerAccessPolicy(groupName: "driver", groupID: nil, daemonUID: 500)
        #expect(!noGroup.mayMutate(peer(uid: 1000, gid: 990)))
    }

    @Test("supplementary gid 0 never grants group 0, since it cannot be told from padding")
    func groupZero() {
        let rootGroup = PeerAccessPolicy(groupName: "root", groupID: 0, daemonUID: 500)
        #expect(!rootGroup.mayMutate(peer(uid: 1000, gid: 1000, groups: [0])))
        #expect(rootGroup.mayMutate(peer(uid: 1000, gid: 0)))
    }
}
