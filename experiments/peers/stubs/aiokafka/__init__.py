# stand-in: Kafka off
class AIOKafkaProducer: pass
class AIOKafkaConsumer: pass
