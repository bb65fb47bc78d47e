import NIOCore
import NIOSSL

extension HTTPAvailabilityClient {
    /// Holds a new TLS connection back until its handshake is done and the certificate
    /// names the URL's host, so that no request, and no name typed into a form, goes to a
    /// server that is not the service. NIOSSL's check (`.fullVerification`) comes first; it
    /// also takes an IP address entry equal to the address a name resolved to, which
    /// `PostgresServerName`'s rule (the one of libpq's verify-full) does not.
    final class TLSGate: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        let host: String
        let promise: EventLoopPromise<Void>
        private var pending = true

        init(host: String, promise: EventLoopPromise<Void>) {
            self.host = host
            self.promise = promise
        }

        func fail(_ error: any Error) {
            guard pending else { return }
            pending = false
            promise.fail(error)
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            // The handshake's completion is the TLS handler's first event: from then on it
            // knows the negotiated version and the (chain-verified) certificate.
            if pending, let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self), tls.tlsVersion != nil {
                if let certificate = tls.peerCertificate, PostgresServerName.matches(certificate, host: host) {
                    pending = false
                    promise.succeed()
                } else {
                    fail(AvailabilityFailure.WrongName(host: host, certificate: tls.peerCertificate))
                    context.close(promise: nil)
                }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            // BoringSSL says only CERTIFICATE_VERIFY_FAILED; the certificate it got (kept
            // after the failure) tells an expired or not yet valid one apart.
            if pending, let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
                let tls = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
                fail(AvailabilityFailure.WrongName(host: host, certificate: tls?.peerCertificate))
            } else if pending, "\(error)".contains("CERTIFICATE_VERIFY_FAILED"),
                let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self).peerCertificate,
                let dated = AvailabilityFailure.OutOfDate(certificate)
            {
                fail(dated)
            } else {
                fail(error)
            }
            context.fireErrorCaught(error)
        }

        func channelInactive(context: ChannelHandlerContext) {
            fail(AvailabilityFailure.ClosedDuringHandshake())
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            fail(AvailabilityFailure.ClosedDuringHandshake())
        }
    }
}
