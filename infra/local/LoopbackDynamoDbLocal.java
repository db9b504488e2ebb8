import java.lang.reflect.Field;

/**
 * Starts DynamoDB Local as its ServerRunner does, with its Jetty connectors bound to one host (the system property
 * platform.bindHost, default 127.0.0.1): DynamoDB Local itself has no option for it and listens on every interface.
 * Reflection only, so it compiles without the jar (javac --release 17).
 */
public final class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("platform.bindHost", "127.0.0.1");
    Class<?> runner = Class.forName("com.amazonaws.services.dynamodbv2.local.main.ServerRunner");
    Object proxy = runner.getMethod("createServerFromCommandLineArgs", String[].class).invoke(null, (Object) args);
    Field field = proxy.getClass().getDeclaredField("server");
    field.setAccessible(true);
    Object jetty = field.get(proxy);
    Object[] connectors = (Object[]) jetty.getClass().getMethod("getConnectors").invoke(jetty);
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Object connector : connectors) connector.getClass().getMethod("setHost", String.class).invoke(connector, host);
    proxy.getClass().getMethod("start").invoke(proxy);
  }
}
