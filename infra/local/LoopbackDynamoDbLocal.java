import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.HandlerWrapper;

/**
 * Starts DynamoDB Local as its ServerRunner does, with its Jetty connectors bound to one host (the system property
 * platform.bindHost, default 127.0.0.1): DynamoDB Local itself has no option for it and listens on every interface.
 * In front of its handler, a gate: only requests carrying the token of this start (x-platform-backend-token, the
 * first line of stdin, never argv or the environment, which other processes can read) reach it, so only the
 * local cloud's policy proxy does; the others get 403 AccessDeniedException. A body over DynamoDB's request limit
 * (16 MiB) gets 413. DynamoDB Local's own classes by reflection; compiled against DynamoDBLocal_lib's Jetty 9.4 and
 * servlet API (javac --release 17 -cp 'DynamoDBLocal_lib/*').
 */
public final class LoopbackDynamoDbLocal extends HandlerWrapper {
  private static final String TOKEN_HEADER = "x-platform-backend-token";
  private static final long MAX_BODY = 16L * 1024 * 1024;
  private final byte[] token;

  private LoopbackDynamoDbLocal(String token) {
    this.token = token.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void handle(String target, Request base, HttpServletRequest req, HttpServletResponse res)
      throws IOException, javax.servlet.ServletException {
    String given = req.getHeader(TOKEN_HEADER);
    if (given == null || !MessageDigest.isEqual(given.getBytes(StandardCharsets.UTF_8), token)) {
      refuse(base, res, 403, "AccessDeniedException",
          "DynamoDB Local answers only the local cloud's policy proxy: sign the request with a role's keys and send it to the proxy's endpoint.");
      return;
    }
    if (req.getContentLengthLong() > MAX_BODY) {
      // Answered now and the connection closed, the body unread: Jetty would otherwise wait to consume it.
      res.setHeader("Connection", "close");
      refuse(base, res, 413, "RequestEntityTooLargeException", "The request body is larger than 16 MiB.");
      return;
    }
    super.handle(target, base, req, res);
  }

  private static void refuse(Request base, HttpServletResponse res, int status, String type, String message)
      throws IOException {
    base.setHandled(true);
    byte[] body = ("{\"__type\":\"com.amazonaws.dynamodb.v20120810#" + type + "\",\"message\":\"" + message + "\"}")
        .getBytes(StandardCharsets.UTF_8);
    res.setStatus(status);
    res.setContentType("application/x-amz-json-1.0");
    res.setHeader("x-amzn-ErrorType", type);
    res.setContentLength(body.length);
    res.getOutputStream().write(body);
  }

  public static void main(String[] args) throws Exception {
    String token = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    if (token == null || token.length() < 32) throw new IllegalStateException("No backend token on stdin");
    String host = System.getProperty("platform.bindHost", "127.0.0.1");
    Class<?> runner = Class.forName("com.amazonaws.services.dynamodbv2.local.main.ServerRunner");
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
    Field field = proxy.getClass().getDeclaredField("server");
    field.setAccessible(true);
    Server jetty = (Server) field.get(proxy);
    Connector[] connectors = jetty.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) ((AbstractNetworkConnector) connector).setHost(host);
    jetty.insertHandler(new LoopbackDynamoDbLocal(token));
    proxy.getClass().getMethod("start").invoke(proxy);
  }
}
