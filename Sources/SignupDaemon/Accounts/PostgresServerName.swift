import NIOCore
import NIOPosix
import PostgresNIO

/// `sslmode=verify-full` as libpq means it: the certificate must name the host written in
/// the URL. NIOSSL's own check also accepts an IP address entry equal to the address the
/// name resolved to, so a certificate for `db.example` and `127.0.0.1` would pass for a URL
/// naming `vm` (resolving to 127.0.0.1). libpq compares DNS entries with the name and IP
/// entries only with an address literally written as the host; so does this.
enum PostgresServerName {
    /// Whether `certificate` names `host` by libpq's rule (subjectAltName DNS entries, with
    /// a `*.` wildcard for one left-most label; IP entries only for an address host).
    static func matches(_ certificate: NIOSSLCertificate, host: String) -> Bool {
        let wanted = host.lowercased().hasSuffix(".") ? String(host.lowercased().dropLast()) : host.lowercased()
        let address = ipAddressBytes(wanted)
        for name in certificate._subjectAlternativeNames() {
            switch name.nameType {
            case .dnsName:
                if address == nil, dnsMatches(String(decoding: Array(name.contents), as: UTF8.self), wanted) { return true }
            case .ipAddress:
                if let address, Array(name.contents) == address { return true }
            default:
                continue
            }
        }
        // libpq falls back to the common name when there is no subjectAltName at all; NIOSSL
        // does not expose it, so such a (deprecated) certificate is refused here.
        return false
    }

    private static func dnsMatches(_ pattern: String, _ host: String) -> Bool {
        let pattern = pattern.lowercased()
        if pattern == host { return true }
        guard pattern.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
        return host[dot...] == pattern.dropFirst() && host.distance(from: host.startIndex, to: dot) > 0
    }

    private static func ipAddressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// Connects to the server, asks for TLS as a PostgreSQL client does (SSLRequest), and
    /// returns the certificate it presents once `context` has verified its chain.
    static func serverCertificate(host: String, port: Int, context: NIOSSLContext, eventLoop: any EventLoop, timeout: TimeAmount) async throws -> NIOSSLCertificate {
        let promise = eventLoop.makePromise(of: NIOSSLCertificate.self)
        let serverName = ipAddressBytes(host) == nil ? host : nil
        let channel = try await ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(SSLRequestHandler(context: context, serverName: serverName, promise: promise))
                }
            }
            .connect(host: host, port: port).get()
        let deadline = eventLoop.scheduleTask(in: timeout) { promise.fail(Refusal("the server did not finish the TLS handshake within \(timeout.nanoseconds / 1_000_000) ms")) }
        defer {
            deadline.cancel()
            channel.close(promise: nil)
        }
        return try await promise.futureResult.get()
    }

    struct Refusal: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private final class SSLRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        let context: NIOSSLContext
        let serverName: String?
        let promise: EventLoopPromise<NIOSSLCertificate>
        var asked = true

        init(context: NIOSSLContext, serverName: String?, promise: EventLoopPromise<NIOSSLCertificate>) {
            self.context = context
            self.serverName = serverName
            self.promise = promise
        }

        func channelActive(context: ChannelHandlerContext) {
            // Int32 length 8, then the SSLRequest code 80877103.
            context.writeAndFlush(NIOAny(context.channel.allocator.buffer(bytes: [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F])), promise: nil)
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var buffer = unwrapInboundIn(data)
            guard asked, let answer = buffer.readInteger(as: UInt8.self) else { return }
            asked = false
            guard answer == UInt8(ascii: "S") else {
                promise.fail(Refusal("the server does not offer TLS"))
                return
            }
            do {
                let tls = try NIOSSLClientHandler(context: self.context, serverHostname: serverName)
                try context.pipeline.syncOperations.addHandler(tls, position: .before(self))
            } catch {
                promise.fail(error)
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            // The handshake's completion is the TLS handler's first event: from then on it
            // knows the negotiated version and the (chain-verified) certificate.
            if let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self), tls.tlsVersion != nil {
                if let certificate = tls.peerCertificate {
                    promise.succeed(certificate)
                } else {
                    promise.fail(Refusal("the server presented no certificate"))
                }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(Refusal("the server closed the connection during the TLS handshake"))
            context.fireChannelInactive()
        }
    }
}
