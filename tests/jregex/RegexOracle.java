// The reference for the Java-dialect topic filter: java.util.regex itself, and the original's
// kafka.consumer.Whitelist/Blacklist when their jar is on the classpath.
//
// Mode "match" (default): each stdin line is `HEX(raw filter)\txHEX(topic),xHEX(topic),...`:
// a topic is `x` + HEX so that an empty name survives the split; HEX is the string's UTF-16
// code units in hex, 4 digits each. Each answer line is
// `E\tHEX(message)` when the filter is rejected, else `C\tHEX(regex)\tM\tW\tB` where M, W, B hold
// one digit per topic: Pattern.matcher(topic).matches() on the normalised regex, and
// Whitelist/Blacklist.isTopicAllowed(topic, true) (`-` when the original's classes are absent).
//
// Mode "tables": prints the Java runtime's Unicode tables the translator needs, as JSON.
import java.io.*;
import java.util.*;
import java.util.function.IntPredicate;
import java.util.regex.*;

public class RegexOracle {
    static String hex(String s) {
        StringBuilder b = new StringBuilder(s.length() * 4);
        for (int i = 0; i < s.length(); i++) b.append(String.format("%04x", (int) s.charAt(i)));
        return b.toString();
    }

    static String unhex(String h) {
        StringBuilder b = new StringBuilder(h.length() / 4);
        for (int i = 0; i + 4 <= h.length(); i += 4) b.append((char) Integer.parseInt(h.substring(i, i + 4), 16));
        return b.toString();
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("tables")) { tables(); return; }
        Class<?> wl = null, bl = null;
        try {
            wl = Class.forName("kafka.consumer.Whitelist");
            bl = Class.forName("kafka.consumer.Blacklist");
        } catch (ClassNotFoundException e) { /* Pattern only */ }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, "UTF-8")));
        String line;
        // One answer per line, flushed: the caller may ask one question at a time.
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            String raw = unhex(parts[0]);
            String[] topics = parts.length > 1 && !parts[1].isEmpty() ? parts[1].split(",") : new String[0];
            Object w = null, b = null;
            String regex;
            try {
                if (wl != null) {
                    w = wl.getConstructor(String.class).newInstance(raw);
                    b = bl.getConstructor(String.class).newInstance(raw);
                    regex = (String) wl.getMethod("regex").invoke(w);
                } else {
                    regex = raw;
                }
                Pattern p = Pattern.compile(regex);
                StringBuilder m = new StringBuilder(), wa = new StringBuilder(), ba = new StringBuilder();
                for (String th : topics) {
                    String t = unhex(th.substring(1));
                    m.append(p.matcher(t).matches() ? '1' : '0');
                    if (w != null) {
                        java.lang.reflect.Method allowed = wl.getMethod("isTopicAllowed", String.class, boolean.class);
                        wa.append((Boolean) allowed.invoke(w, t, true) ? '1' : '0');
                        ba.append((Boolean) bl.getMethod("isTopicAllowed", String.class, boolean.class).invoke(b, t, true) ? '1' : '0');
                    } else { wa.append('-'); ba.append('-'); }
                }
                out.println("C\t" + hex(regex) + "\t" + m + "\t" + wa + "\t" + ba);
            } catch (java.lang.reflect.InvocationTargetException e) {
                out.println("E\t" + hex(String.valueOf(e.getCause().getMessage())));
            } catch (PatternSyntaxException e) {
                out.println("E\t" + hex(e.getPattern() + " is an invalid regex."));
            } catch (StackOverflowError e) {
                out.println("S\t");
            }
            out.flush();
        }
        out.flush();
    }

    static void ranges(StringBuilder sb, IntPredicate p) {
        sb.append('[');
        boolean first = true;
        int cp = 0;
        while (cp <= Character.MAX_CODE_POINT) {
            if (!p.test(cp)) { cp++; continue; }
            int start = cp;
            while (cp + 1 <= Character.MAX_CODE_POINT && p.test(cp + 1)) cp++;
            if (!first) sb.append(',');
            sb.append(start).append(',').append(cp);
            first = false;
            cp++;
        }
        sb.append(']');
    }

    static void tables() throws Exception {
        StringBuilder sb = new StringBuilder("{\n\"java\": \"" + System.getProperty("java.version") + "\",\n");
        sb.append("\"category\": {");
        for (int t = 0; t < 31; t++) {
            final int type = t;
            if (t == 17) continue;  // no category 17
            sb.append(t == 0 ? "" : ",").append("\n\"").append(t).append("\": ");
            ranges(sb, c -> Character.getType(c) == type);
        }
        sb.append("},\n\"script\": {");
        boolean first = true;
        for (Character.UnicodeScript s : Character.UnicodeScript.values()) {
            sb.append(first ? "" : ",").append("\n\"").append(s.name()).append("\": ");
            ranges(sb, c -> Character.UnicodeScript.of(c) == s);
            first = false;
        }
        sb.append("},\n\"script_alias\": {");
        java.lang.reflect.Field af = Character.UnicodeScript.class.getDeclaredField("aliases");
        af.setAccessible(true);
        @SuppressWarnings("unchecked")
        Map<String, Character.UnicodeScript> aliases = (Map<String, Character.UnicodeScript>) af.get(null);
        first = true;
        for (Map.Entry<String, Character.UnicodeScript> e : new TreeMap<>(aliases).entrySet()) {
            sb.append(first ? "" : ",").append("\n\"").append(e.getKey()).append("\": \"").append(e.getValue().name()).append('"');
            first = false;
        }
        sb.append("},\n\"block\": {");
        java.lang.reflect.Field mf = Character.UnicodeBlock.class.getDeclaredField("map");
        mf.setAccessible(true);
        @SuppressWarnings("unchecked")
        Map<String, Character.UnicodeBlock> blocks = (Map<String, Character.UnicodeBlock>) mf.get(null);
        Map<Character.UnicodeBlock, String> idOf = new HashMap<>();
        java.lang.reflect.Field[] fields = Character.UnicodeBlock.class.getFields();
        for (java.lang.reflect.Field f : fields) {
            Object v = f.get(null);
            if (v instanceof Character.UnicodeBlock && !idOf.containsKey(v)) idOf.put((Character.UnicodeBlock) v, f.getName());
        }
        first = true;
        for (Character.UnicodeBlock blk : new TreeSet<>(idOf.values()).stream().map(n -> {
                try { return (Character.UnicodeBlock) Character.UnicodeBlock.class.getField(n).get(null); }
                catch (Exception e) { throw new RuntimeException(e); } }).toList()) {
            sb.append(first ? "" : ",").append("\n\"").append(idOf.get(blk)).append("\": ");
            ranges(sb, c -> Character.UnicodeBlock.of(c) == blk);
            first = false;
        }
        sb.append("},\n\"block_name\": {");
        first = true;
        for (Map.Entry<String, Character.UnicodeBlock> e : new TreeMap<>(blocks).entrySet()) {
            sb.append(first ? "" : ",").append("\n\"").append(e.getKey()).append("\": \"").append(idOf.get(e.getValue())).append('"');
            first = false;
        }
        sb.append("},\n\"upper\": [");
        first = true;
        for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
            int u = Character.toUpperCase(c);
            if (u != c) { sb.append(first ? "" : ",").append(c).append(',').append(u); first = false; }
        }
        sb.append("],\n\"lower\": [");
        first = true;
        for (int c = 0; c <= Character.MAX_CODE_POINT; c++) {
            int l = Character.toLowerCase(c);
            if (l != c) { sb.append(first ? "" : ",").append(c).append(',').append(l); first = false; }
        }
        sb.append("],\n\"prop\": {");
        Map<String, IntPredicate> props = new LinkedHashMap<>();
        props.put("alphabetic", Character::isAlphabetic);
        props.put("ideographic", Character::isIdeographic);
        props.put("lowercase", Character::isLowerCase);
        props.put("uppercase", Character::isUpperCase);
        props.put("titlecase", Character::isTitleCase);
        props.put("defined", Character::isDefined);
        props.put("mirrored", Character::isMirrored);
        props.put("java_identifier_start", Character::isJavaIdentifierStart);
        props.put("java_identifier_part", Character::isJavaIdentifierPart);
        props.put("unicode_identifier_start", Character::isUnicodeIdentifierStart);
        props.put("unicode_identifier_part", Character::isUnicodeIdentifierPart);
        props.put("identifier_ignorable", Character::isIdentifierIgnorable);
        props.put("whitespace", Character::isWhitespace);
        first = true;
        for (Map.Entry<String, IntPredicate> e : props.entrySet()) {
            sb.append(first ? "" : ",").append("\n\"").append(e.getKey()).append("\": ");
            ranges(sb, e.getValue());
            first = false;
        }
        sb.append("}\n}\n");
        System.out.print(sb);
    }
}
